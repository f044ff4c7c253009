/**
 * The HA layout of scripts/ha/layout.sh, driven from a test or a benchmark (bench/failover.ts): up
 * and down, which member leads, a member's PostgreSQL killed, the layout healthy again. Ports and
 * directories are the script's defaults (HA_DIR and the HA_* ports move both). Run from the
 * repository's root, as npm runs tests and benchmarks.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = path.resolve('scripts', 'ha', 'layout.sh');

export const HA_DIR = process.env.HA_DIR ?? '/var/tmp/commerce-ha';
const haproxyPort = Number(process.env.HA_HAPROXY_PORT ?? 5440);
const singlePort = Number(process.env.HA_SINGLE_PORT ?? 5443);
/** Through HAProxy: always the current primary. */
export const HA_URL = `postgres://postgres@127.0.0.1:${haproxyPort}/postgres`;
/** The lone PostgreSQL with the members' settings (`layout.sh single up`). */
export const SINGLE_URL = `postgres://postgres@127.0.0.1:${singlePort}/postgres`;
export const MEMBERS = ['pg1', 'pg2'] as const;
export type Member = (typeof MEMBERS)[number];
const restPort = (member: Member) => 8440 + Number(member.slice(2));

/** Runs `layout.sh ...args` (a last argument of settings goes to its environment); answers what it printed. */
export async function layout(...args: (string | Record<string, string>)[]): Promise<string> {
  const last = args[args.length - 1];
  const env = typeof last === 'object' ? { ...process.env, ...last } : process.env;
  const words = args.filter((arg): arg is string => typeof arg === 'string');
  try {
    const { stdout, stderr } = await run('bash', [script, ...words], {
      env,
      maxBuffer: 16 * 2 ** 20,
      timeout: 600_000,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`layout.sh ${words.join(' ')} failed: ${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

export interface MemberState {
  role?: string;
  state?: string;
  sync_standby?: boolean;
  timeline?: number;
  /** The primary kept its role without etcd, every member having answered it (failsafe_mode). */
  failsafe_mode_is_active?: boolean;
  replication?: { application_name: string; state: string; sync_state: string }[];
}

/** What a member's Patroni says of itself (GET /patroni), or undefined when it does not answer. */
export async function memberState(member: Member): Promise<MemberState | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${restPort(member)}/patroni`, {
      signal: AbortSignal.timeout(2000),
    });
    return (await response.json()) as MemberState;
  } catch {
    return undefined;
  }
}

/** The member whose PostgreSQL runs as primary, and the one streaming to it as synchronous standby. */
export async function roles(): Promise<{ primary?: Member; syncStandby?: Member }> {
  const found: { primary?: Member; syncStandby?: Member } = {};
  for (const member of MEMBERS) {
    const state = await memberState(member);
    if (state?.state !== 'running') continue;
    if (state.role === 'master' || state.role === 'primary') {
      const standby = state.replication?.find((r) => r.sync_state === 'sync' && r.state === 'streaming');
      found.primary = member;
      if (standby && (MEMBERS as readonly string[]).includes(standby.application_name))
        found.syncStandby = standby.application_name as Member;
    }
  }
  return found;
}

/** The member Patroni has recorded as synchronous standby (its `/sync` key in etcd, read through GET /cluster). */
async function recordedSyncStandby(primary: Member): Promise<string | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${restPort(primary)}/cluster`, {
      signal: AbortSignal.timeout(2000),
    });
    const cluster = (await response.json()) as { members?: { name: string; role: string }[] };
    return cluster.members?.find((member) => member.role === 'sync_standby')?.name;
  } catch {
    return undefined;
  }
}

/**
 * Waits until one member is primary with the other as its synchronous standby, streaming and
 * recorded as such by Patroni; answers the primary. Recorded too: Patroni 3.0.2 names a rejoining
 * standby in synchronous_standby_names about 2 s before it records it, and a standby lost in
 * between stays named, so every commit waits for it (patroni/patroni#3468; docs/operations.md).
 */
export async function waitHealthy(timeoutMs = 180_000): Promise<Member> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { primary, syncStandby } = await roles();
    if (primary && syncStandby && (await recordedSyncStandby(primary)) === syncStandby) return primary;
    if (Date.now() > deadline) throw new Error(`the layout is not healthy after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** SIGKILL to a member's postmaster (its backends die with it); Patroni keeps running. */
export function killPostgres(member: Member): number {
  const pid = Number(readFileSync(`${HA_DIR}/${member}/data/postmaster.pid`, 'utf8').split('\n')[0]);
  process.kill(pid, 'SIGKILL');
  return pid;
}
