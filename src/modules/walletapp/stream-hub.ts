import type { FastifyBaseLogger } from 'fastify';
import type { Database, Listener } from '../../db/database.js';
import { WALLET_REQUEST_CHANNEL } from '../requests/wallet-notice.js';

/**
 * How many live streams this process holds open at once (decision 077). Past either bound the new
 * stream is refused with a plain 429 rather than closing the oldest: a browser's EventSource does
 * not reconnect after a non-200 answer, so the refused tab simply stays without live updates (a
 * reload still shows every request), whereas closing the oldest makes that tab reconnect a second
 * later and close the next oldest in turn, tabs evicting each other for ever; and at one address
 * (a shared NAT, a carrier's gateway) closing the oldest would let one client end its neighbours'
 * streams. The counts are this process's: behind several API processes the bound is per process.
 */
export const STREAM_CAPS = { perSession: 3, perAddress: 20 } as const;

export type StreamRefusal = 'session' | 'address';

/** A place among the open streams, held until `release`. */
export interface StreamSlot {
  /** Calls `wake` whenever a request to this wallet may have been created (or the listener reconnected). */
  watch(walletId: string, wake: () => void): void;
  release(): void;
}

export interface StreamHub {
  take(sessionKey: string, addressKey: string): StreamSlot | StreamRefusal;
  /** Resolves once the process listens (or failed to: the streams' slow poll then does the work). */
  listening(): Promise<void>;
  close(): Promise<void>;
}

function bump(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

/**
 * The process's one listener on WALLET_REQUEST_CHANNEL, opened with the first stream, and the
 * streams it wakes: a notification's payload is a wallet id and wakes that wallet's streams only;
 * one without a payload (the listener connected again and may have missed some) wakes all.
 */
export function streamHub(database: Database, log: FastifyBaseLogger): StreamHub {
  const byWallet = new Map<string, Set<() => void>>();
  const perSession = new Map<string, number>();
  const perAddress = new Map<string, number>();
  let listener: Promise<Listener | undefined> | undefined;
  let closed = false;

  const dispatch = (payload?: string) => {
    const woken = payload ? [byWallet.get(payload) ?? []] : byWallet.values();
    for (const wakes of woken) for (const wake of wakes) wake();
  };

  return {
    take(sessionKey, addressKey) {
      if ((perSession.get(sessionKey) ?? 0) >= STREAM_CAPS.perSession) return 'session';
      if ((perAddress.get(addressKey) ?? 0) >= STREAM_CAPS.perAddress) return 'address';
      bump(perSession, sessionKey, 1);
      bump(perAddress, addressKey, 1);
      let watched: { walletId: string; wake: () => void } | undefined;
      let released = false;
      return {
        watch(walletId, wake) {
          watched = { walletId, wake };
          const wakes = byWallet.get(walletId) ?? new Set();
          wakes.add(wake);
          byWallet.set(walletId, wakes);
        },
        release() {
          if (released) return;
          released = true;
          bump(perSession, sessionKey, -1);
          bump(perAddress, addressKey, -1);
          if (!watched) return;
          const wakes = byWallet.get(watched.walletId);
          wakes?.delete(watched.wake);
          if (wakes?.size === 0) byWallet.delete(watched.walletId);
        },
      };
    },
    async listening() {
      if (closed) return;
      listener ??= database
        .listen(WALLET_REQUEST_CHANNEL, dispatch, (error) =>
          log.warn({ err: error }, 'lost the wallet stream notification connection; reconnecting'),
        )
        .catch((error: unknown) => {
          log.warn({ err: error }, 'could not listen for new payment requests; wallet streams poll only');
          return undefined;
        });
      await listener;
    },
    async close() {
      closed = true;
      await (await listener)?.close();
    },
  };
}
