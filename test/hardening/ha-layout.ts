/**
 * The HA layout of scripts/ha/layout.sh, driven from a test or a benchmark (bench/failover.ts): up
 * and down, which member leads, a member's PostgreSQL killed, the layout healthy again. Ports and
 * directories are the script's defaults (HA_DIR and the HA_* ports move both). Run from the
 * repository's root, as npm runs tests and benchmarks, as root (or the postgres user): the
 * layout's passwords are in HA_DIR/credentials, readable by postgres only, generated at `up`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = path.resolve('scripts', 'ha', 'layout.sh');

export const HA_DIR = process.env.HA_DIR ?? '/var/tmp/commerce-ha';
const haproxyPort = Number(process.env.HA_HAPROXY_PORT ?? 5440);
const singlePort = Number(process.env.HA_SINGLE_PORT ?? 5443);
const pgbouncerPort = Number(process.env.HA_PGBOUNCER_PORT ?? 5446);
export const etcdPort = Number(process.env.HA_ETCD_PORT ?? 2479);
export const MEMBERS = ['pg1', 'pg2'] as const;
export type Member = (typeof MEMBERS)[number];
export const restPort = (member: Member) => 8440 + Number(member.slice(2));

/** The passwords `layout.sh up` generated (HA_DIR/credentials: `SUPERUSER_PASSWORD=...` lines). */
export function credentials(): Record<string, string> {
  const text = readFileSync(`${HA_DIR}/credentials`, 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** The application's role (`app`), or the superuser for an operator's query, with its generated password. */
type Role = 'app' | 'postgres';
function urlOf(port: number, role: Role): string {
  const password = credentials()[role === 'app' ? 'APP_PASSWORD' : 'SUPERUSER_PASSWORD'];
  return `postgres://${role}:${password}@127.0.0.1:${port}/postgres`;
}
/** Through HAProxy: always the current primary. Read at each call: the passwords change at each `up`. */
export const haUrl = (role: Role = 'app') => urlOf(haproxyPort, role);
/** Through PgBouncer (transaction pooling, in front of HAProxy): the application's role only. */
export const haPooledUrl = () => urlOf(pgbouncerPort, 'app');
/** The lone PostgreSQL with the members' settings (`layout.sh single up`). */
export const singleUrl = (role: Role = 'app') => urlOf(singlePort, role);

/** A file of the layout's certificate authority (HA_DIR/tls): its CA, or a client's certificate and key. */
const tlsFile = (name: string) => readFileSync(`${HA_DIR}/tls/${name}`);

export interface Answer {
  status: number;
  text: string;
}

function httpsRequest(options: https.RequestOptions, body?: unknown, timeoutMs = 2000): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: '127.0.0.1', timeout: timeoutMs, ca: tlsFile('ca.crt'), ...options },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * A request to a member's Patroni REST API over TLS (its certificate checked against the layout's
 * CA); with `password`, as the REST API's user `patroni` (HTTP basic authentication). An action
 * answers once done (a switchover: once the candidate is primary), hence `timeoutMs`.
 */
export function restApi(
  member: Member,
  method: string,
  pathname: string,
  options: { password?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Answer> {
  return httpsRequest(
    {
      port: restPort(member),
      method,
      path: pathname,
      auth: options.password === undefined ? undefined : `patroni:${options.password}`,
      headers: options.body === undefined ? {} : { 'content-type': 'application/json' },
    },
    options.body,
    options.timeoutMs,
  );
}

/** An etcd v3 read of Patroni's keys over TLS, with the operator's client certificate or none. */
export function etcdRead(client: 'operator' | 'none'): Promise<Answer> {
  const certificate = client === 'operator' ? { cert: tlsFile('operator.crt'), key: tlsFile('operator.key') } : {};
  // The range [/service/, /service0): every key under /service/, base64 as the JSON gateway wants.
  const body = {
    key: Buffer.from('/service/').toString('base64'),
    range_end: Buffer.from('/service0').toString('base64'),
  };
  return httpsRequest({ port: etcdPort, method: 'POST', path: '/v3/kv/range', ...certificate }, body);
}

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
    return JSON.parse((await restApi(member, 'GET', '/patroni')).text) as MemberState;
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
    const answer = await restApi(primary, 'GET', '/cluster');
    const cluster = JSON.parse(answer.text) as { members?: { name: string; role: string }[] };
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
