import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { lockPayer, type Payer } from '../payments/payers.js';
import { createWallet, hashPin } from '../wallets/service.js';

/** The sandbox payer used when a simulation names none (the rich test wallet of the README). */
export const SANDBOX_DEFAULT_PAYER = '+22220000001';

/** decisions.md: in the sandbox, a payment of exactly this many centimes always fails. */
export const SANDBOX_FAILING_AMOUNT = 1313;

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

/** How the sandbox wallet of `phone` answers a payment. */
export function sandboxAnswerOf(phone: string): { answer: SandboxAnswer; afterSeconds: number | null } {
  return (
    (SANDBOX_ANSWERING_PHONES as Record<string, { answer: SandboxAnswer; afterSeconds: number | null }>)[phone] ?? {
      answer: 'PAYS',
      afterSeconds: 0,
    }
  );
}

/** decisions.md: any E.164 phone may pay in the sandbox; one without a wallet gets a funded one. */
export const SANDBOX_NEW_WALLET_BALANCE = 100_000_000;
export const SANDBOX_NEW_WALLET_PIN = '1234';

// Every new sandbox wallet has the same documented PIN, so a salt of its own would hide nothing:
// one hash per process. Only a process's first new phone still pays for the slow scrypt inside its
// payment's transaction, its intent locked; every later one reuses that hash.
let sandboxPinHash: Promise<string> | undefined;

/** The sandbox wallet of a phone, locked; a phone with none gets a funded one first. */
export async function sandboxPayer(trx: Transaction<DB>, phone: string): Promise<Payer> {
  const payer = await lockPayer(trx, 'test', phone);
  if (payer) return payer;
  sandboxPinHash ??= hashPin(SANDBOX_NEW_WALLET_PIN).catch((error: unknown) => {
    sandboxPinHash = undefined;
    throw error;
  });
  try {
    await createWallet(
      trx,
      { phone, pin: SANDBOX_NEW_WALLET_PIN, balance: SANDBOX_NEW_WALLET_BALANCE, environment: 'test' },
      sandboxPinHash,
    );
  } catch (error) {
    // A concurrent payment from the same new phone made the wallet first: pay from that one.
    if (!(error instanceof ApiError)) throw error;
  }
  const created = await lockPayer(trx, 'test', phone);
  if (!created) throw new Error(`sandbox wallet ${phone} was not created`);
  return created;
}
