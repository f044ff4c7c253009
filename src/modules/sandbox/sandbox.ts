import type { Kysely, Transaction } from 'kysely';
import type { DB, IntentStatus, PaymentFailure, PaymentRequestStatus } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { ApiError, type ErrorCode } from '../../http/errors.js';
import { lockPayer, type Payer } from '../payments/payers.js';
import { createWallet, findWallet, hashPin, type WalletRow } from '../wallets/service.js';

/**
 * The sandbox in one place: its test wallets (the PIN, their one hash, how one is opened) and its
 * scenarios, the amounts and phones whose payments and payouts do something known in advance.
 */

/** The PIN of every sandbox wallet the platform opens: the documented one, so the same for all. */
export const SANDBOX_WALLET_PIN = '1234';

/** decisions.md: in the sandbox, a payment of exactly this many centimes always fails. */
export const SANDBOX_FAILING_AMOUNT = 1313;

/** The sandbox payer used when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_DEFAULT_PAYER = '+22220000001';

/** A sandbox wallet with too little for most payments. */
export const SANDBOX_POOR_PAYER = '+22220000002';

/** A sandbox wallet locked by an operator: payments from it and payouts to it are refused. */
export const SANDBOX_LOCKED_PAYER = '+22220000003';

/**
 * decisions "Payouts": in the sandbox a payout to this phone always fails (WALLET_NOT_FOUND), as
 * a payment of the reserved amount does; any other E.164 phone without a wallet gets one.
 */
export const SANDBOX_FAILING_PAYOUT_PHONE = '+22220001313';

/** decisions.md: any E.164 phone may pay in the sandbox; one without a wallet gets a funded one. */
export const SANDBOX_NEW_WALLET_BALANCE = 100_000_000;

/**
 * What a sandbox payer's wallet does when asked to pay: pay at once (any phone not listed, which
 * gets a funded wallet if it has none), or answer later as a payer deciding on a phone would
 * (a payment that waits, PROCESSING, until the worker ends it).
 */
export type SandboxAnswer = 'PAYS' | 'APPROVES' | 'DECLINES' | 'NEVER_ANSWERS';

/**
 * The phones whose wallet answers later, and after how long: the scenario catalogue of
 * docs/payments.md. A payment that never gets an answer ends FAILED when it times out
 * (`PAYMENT_PROCESSING_TIMEOUT_SECONDS`).
 */
export const SANDBOX_ANSWERING_PHONES = {
  '+22220000004': { answer: 'APPROVES', afterSeconds: 2 },
  '+22220000005': { answer: 'DECLINES', afterSeconds: 2 },
  '+22220000006': { answer: 'NEVER_ANSWERS', afterSeconds: null },
} as const satisfies Record<string, { answer: SandboxAnswer; afterSeconds: number | null }>;

/**
 * The phones whose sandbox wallet answers a payment request by itself, after how long: the
 * scenario catalogue of docs/payments.md. `+22220000002` (1.00 MRU) approves and its payment fails
 * for too little balance. Any other phone waits for its answer in the wallet app.
 */
export const SANDBOX_REQUEST_PHONES = {
  '+22220000021': { answer: 'APPROVES', afterSeconds: 2 },
  '+22220000022': { answer: 'DECLINES', afterSeconds: 2 },
  '+22220000023': { answer: 'NEVER_ANSWERS', afterSeconds: null },
  [SANDBOX_POOR_PAYER]: { answer: 'APPROVES', afterSeconds: 2 },
} as const satisfies Record<string, { answer: SandboxAnswer; afterSeconds: number | null }>;

/** How the sandbox wallet of `phone` answers a payment. */
export function sandboxAnswerOf(phone: string): { answer: SandboxAnswer; afterSeconds: number | null } {
  return (
    (SANDBOX_ANSWERING_PHONES as Record<string, { answer: SandboxAnswer; afterSeconds: number | null }>)[phone] ?? {
      answer: 'PAYS',
      afterSeconds: 0,
    }
  );
}

/**
 * What a scenario ends in: the error code answered, or the status (and failure) the payment gets,
 * or the status a payment request ends in.
 */
export type SandboxOutcome =
  ErrorCode | PaymentFailure | IntentStatus | PaymentRequestStatus | 'PROCESSING' | 'SUCCEEDED';

/** A wallet the sandbox opens at every start when missing; the test-mode pages list them. */
export interface SandboxWallet {
  balance: number;
  locked: boolean;
  /** How the pages describe it (the checkout and storefront APIs answer it too). */
  note: string;
}

/** One row of the scenario catalogue. */
export interface SandboxScenario {
  /** What sets it off: a payment of this amount, this phone (paying or paid), or any phone no row names. */
  trigger: { amount: number } | { phone: string } | { anyOtherPhone: true };
  /** Its wallet, opened at start, if it has one before anyone pays. */
  wallet?: SandboxWallet;
  /** What it ends in, each named in its row of the catalogue. */
  outcomes: readonly SandboxOutcome[];
}

/** What a payment from an answering phone goes through. */
const ANSWER_OUTCOMES: Record<Exclude<SandboxAnswer, 'PAYS'>, readonly SandboxOutcome[]> = {
  APPROVES: ['PROCESSING', 'SUCCEEDED'],
  DECLINES: ['PROCESSING', 'FAILED'],
  NEVER_ANSWERS: ['PROCESSING', 'FAILED'],
};

/** What a payment request to an answering phone ends in. */
const REQUEST_OUTCOMES: Record<Exclude<SandboxAnswer, 'PAYS'>, readonly SandboxOutcome[]> = {
  APPROVES: ['APPROVED', 'SUCCEEDED'],
  DECLINES: ['DECLINED'],
  NEVER_ANSWERS: ['EXPIRED'],
};

/**
 * The sandbox's scenarios: docs/payments.md lists each as a row of its scenario catalogue (a test
 * keeps the two equal). The failing amount fails a payment of an intent in every channel (orders
 * are never declined by it: decision 010); an unknown phone is refused by the pages like a wrong
 * PIN, and given a funded wallet by a simulation (an empty one by a payout).
 */
export const SANDBOX_SCENARIOS: readonly SandboxScenario[] = [
  { trigger: { amount: SANDBOX_FAILING_AMOUNT }, outcomes: ['FAILED', 'SANDBOX_DECLINED', 'PAYMENT_FAILED'] },
  {
    trigger: { phone: SANDBOX_DEFAULT_PAYER },
    wallet: { balance: 5_000_000_000, locked: false, note: 'rich: 50,000,000.00 MRU' },
    outcomes: ['PAID'],
  },
  {
    trigger: { phone: SANDBOX_POOR_PAYER },
    wallet: { balance: 100, locked: false, note: 'nearly empty: 1.00 MRU' },
    outcomes: ['INSUFFICIENT_BALANCE', 'FAILED'],
  },
  {
    trigger: { phone: SANDBOX_LOCKED_PAYER },
    wallet: { balance: 1_000_000, locked: true, note: 'locked' },
    outcomes: ['WALLET_LOCKED'],
  },
  ...Object.entries(SANDBOX_ANSWERING_PHONES).map(([phone, { answer }]) => ({
    trigger: { phone },
    outcomes: ANSWER_OUTCOMES[answer],
  })),
  // The poor payer's row above covers its requests: approved, then FAILED for too little balance.
  ...Object.entries(SANDBOX_REQUEST_PHONES)
    .filter(([phone]) => phone !== SANDBOX_POOR_PAYER)
    .map(([phone, { answer }]) => ({ trigger: { phone }, outcomes: REQUEST_OUTCOMES[answer] })),
  { trigger: { phone: SANDBOX_FAILING_PAYOUT_PHONE }, outcomes: ['WALLET_NOT_FOUND'] },
  { trigger: { anyOtherPhone: true }, outcomes: ['INVALID_PIN', 'PAID'] },
];

/** The sandbox test wallets, opened at every start when missing: the pages in test mode list them. */
export const SANDBOX_WALLETS = SANDBOX_SCENARIOS.flatMap(({ trigger, wallet }) =>
  wallet && 'phone' in trigger ? [{ phone: trigger.phone, pin: SANDBOX_WALLET_PIN, ...wallet }] : [],
);

// Every sandbox wallet has the same documented PIN, so a salt of its own would hide nothing: one
// hash per process. Each scrypt hash after a process's first leaves its 16 MB work area resident
// (glibc keeps it), and only the first new phone pays for the slow hash inside its transaction.
let pinHash: Promise<string> | undefined;

/** The hash every sandbox wallet's PIN is stored as (one per process; a failed one is tried again). */
export function sandboxPinHash(): Promise<string> {
  pinHash ??= hashPin(SANDBOX_WALLET_PIN).catch((error: unknown) => {
    pinHash = undefined;
    throw error;
  });
  return pinHash;
}

/**
 * The one way a sandbox wallet is opened: with the sandbox PIN and `balance` from the test funding
 * account. Answers it, or undefined when the phone has a wallet already (another transaction or
 * process opened it meanwhile).
 */
export async function openSandboxWallet(
  db: Executor,
  phone: string,
  wallet: { balance: number; locked?: boolean },
): Promise<WalletRow | undefined> {
  try {
    return await createWallet(
      db,
      { phone, pin: SANDBOX_WALLET_PIN, balance: wallet.balance, locked: wallet.locked, environment: 'test' },
      sandboxPinHash(),
    );
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
}

/** Opens the sandbox test wallets that are missing (idempotent; at every start). */
export async function ensureSandboxWallets(db: Kysely<DB>): Promise<void> {
  for (const { phone, balance, locked } of SANDBOX_WALLETS) {
    // Looked up first, so a start that finds them all computes no hash.
    if (!(await findWallet(db, 'test', phone))) await openSandboxWallet(db, phone, { balance, locked });
  }
}

/** The sandbox wallet of a phone, locked; a phone with none gets a funded one first. */
export async function sandboxPayer(trx: Transaction<DB>, phone: string): Promise<Payer> {
  const payer = await lockPayer(trx, 'test', phone);
  if (payer) return payer;
  // A concurrent payment from the same new phone may open it first: then this pays from that one.
  await openSandboxWallet(trx, phone, { balance: SANDBOX_NEW_WALLET_BALANCE });
  const opened = await lockPayer(trx, 'test', phone);
  if (!opened) throw new Error(`sandbox wallet ${phone} was not created`);
  return opened;
}
