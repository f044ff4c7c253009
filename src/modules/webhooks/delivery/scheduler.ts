/** What the scheduler reads of a claimed delivery. */
export interface Schedulable {
  id: string;
  endpoint_id: string;
  business_id: string;
  environment: string;
}

export interface SchedulerLimits {
  /** Attempts in flight in this process, over all endpoints. */
  concurrency: number;
  /** Attempts in flight to one endpoint. */
  perEndpoint: number;
  /** Attempts in flight for one business in one environment that it always gets when it has work. */
  perBusiness: number;
  /**
   * Slots kept for businesses under their `perBusiness`: a business above it starts another
   * attempt only while more than this many slots are free.
   */
  reserved: number;
  /** Deliveries held at most: claimed and not yet recorded (queued, in flight, or being written). */
  maxHeld: number;
  /**
   * After this long without an answer an attempt is stalled: it only waits on its receiver, costs
   * no CPU, and no longer counts against `concurrency` (it still counts for its endpoint and its
   * business). Many silent businesses, each under its share, then cannot hold every slot: another
   * merchant's delivery waits for this at worst, not for their timeouts.
   */
  stalledAfterMs: number;
  /**
   * Attempts in flight at most, stalled ones included: each holds a socket, and a process's file
   * descriptors (often 1,024 by default) are shared with the database pool and the API.
   */
  maxInFlight: number;
}

/** An endpoint whose last answer took at most this long gets deliveries claimed ahead of its free slots. */
export const FAST_ANSWER_MS = 250;
/** How long an endpoint's last quick answer keeps it worth claiming ahead for. */
const FAST_MEMORY_MS = 10_000;
const MAX_REMEMBERED_ANSWERS = 10_000;

/**
 * Which claimed delivery goes out next, without a database or a clock of its own: the deliveries
 * a worker holds, queued per endpoint in the order they were claimed (due order), and the slots
 * in flight. An attempt starts while the process has a slot free, its endpoint has fewer than
 * `perEndpoint` in flight, and its business (in its environment) is under `perBusiness` or slots
 * beyond `reserved` are free. Businesses take turns, one attempt each per turn, and so do the
 * endpoints of a business: a few businesses whose endpoints are slow or silent hold at most
 * `concurrency - reserved` slots (or their shares, if more), and another business's delivery
 * starts as soon as it is claimed. Attempts that stall (`stalledAfterMs`) give their slot back,
 * so however many businesses are silent, another's delivery waits at most that long.
 */
export class DeliveryScheduler<D extends Schedulable> {
  private readonly held = new Map<string, D>();
  /** Queued deliveries per business (and environment), then per endpoint; both maps in turn order. */
  private readonly queues = new Map<string, Map<string, D[]>>();
  private readonly inFlightTo = new Map<string, number>();
  private readonly inFlightFor = new Map<string, number>();
  /** Attempts in flight and not stalled, by id, with when they started: oldest first. */
  private readonly workingAttempts = new Map<string, number>();
  private inFlightCount = 0;
  /** When each endpoint last answered, and whether quickly. */
  private readonly answers = new Map<string, { at: number; fast: boolean }>();

  constructor(readonly limits: SchedulerLimits) {}

  /** Deliveries held, in flight or not. */
  get heldCount(): number {
    return this.held.size;
  }

  /** How many more deliveries may be claimed. */
  get room(): number {
    return Math.max(0, this.limits.maxHeld - this.held.size);
  }

  /** Attempts in flight, stalled ones included. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Attempts in flight that count against `concurrency`: those not stalled. */
  get working(): number {
    return this.workingAttempts.size;
  }

  inFlightForBusiness(delivery: Pick<Schedulable, 'business_id' | 'environment'>): number {
    return this.inFlightFor.get(businessKey(delivery)) ?? 0;
  }

  heldIds(): string[] {
    return [...this.held.keys()];
  }

  /** Takes claimed deliveries into the queues, after those already waiting for their endpoint. */
  hold(deliveries: readonly D[]): void {
    for (const delivery of deliveries) {
      this.held.set(delivery.id, delivery);
      const business = businessKey(delivery);
      let endpoints = this.queues.get(business);
      if (!endpoints) this.queues.set(business, (endpoints = new Map()));
      const queue = endpoints.get(delivery.endpoint_id);
      if (queue) queue.push(delivery);
      else endpoints.set(delivery.endpoint_id, [delivery]);
    }
  }

  /** The deliveries to send now (`now`: the caller's clock), each counted in flight until `finished`. */
  takeStartable(now: number): D[] {
    this.markStalled(now);
    const started: D[] = [];
    for (let progress = true; progress && this.hasSlot();) {
      progress = false;
      for (const [business, endpoints] of [...this.queues]) {
        if (!this.hasSlot()) break;
        if (!this.businessMayStart(business)) continue;
        const delivery = this.nextOf(endpoints);
        if (!delivery) continue;
        this.queues.delete(business);
        if (endpoints.size > 0) this.queues.set(business, endpoints);
        this.count(delivery, +1);
        this.workingAttempts.set(delivery.id, now);
        started.push(delivery);
        progress = true;
      }
    }
    return started;
  }

  /** An attempt ended (its outcome still to be written): its slot is free. */
  finished(delivery: D): void {
    this.count(delivery, -1);
    this.workingAttempts.delete(delivery.id);
  }

  /**
   * In how many ms the oldest working attempt stalls and frees a slot, when deliveries wait for
   * one; null when nothing would start then.
   */
  msUntilStall(now: number): number | null {
    if (this.queues.size === 0) return null;
    for (const startedAt of this.workingAttempts.values()) {
      return Math.max(0, startedAt + this.limits.stalledAfterMs - now);
    }
    return null;
  }

  /** No longer held: its outcome is written, given back, or lost. */
  forget(ids: Iterable<string>): void {
    for (const id of ids) this.held.delete(id);
  }

  /** Empties the queues (a stopping worker gives these back); what is in flight stays held. */
  takeQueued(): D[] {
    const queued = [...this.queues.values()].flatMap((endpoints) => [...endpoints.values()].flat());
    this.queues.clear();
    this.forget(queued.map((delivery) => delivery.id));
    return queued;
  }

  /** Rate-limited endpoints are never claimed ahead: their budget is counted when claimed. */
  noteAnswer(endpointId: string, durationMs: number, rateLimited: boolean, now: number): void {
    this.answers.delete(endpointId);
    this.answers.set(endpointId, { at: now, fast: durationMs <= FAST_ANSWER_MS && !rateLimited });
    if (this.answers.size > MAX_REMEMBERED_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
  }

  /** Endpoints worth claiming ahead for: answered quickly in the last 10 s. */
  fastEndpoints(now: number): string[] {
    const since = now - FAST_MEMORY_MS;
    const fast: string[] = [];
    for (const [endpoint, answer] of this.answers) if (answer.fast && answer.at >= since) fast.push(endpoint);
    return fast;
  }

  private hasSlot(): boolean {
    return this.workingAttempts.size < this.limits.concurrency && this.inFlightCount < this.limits.maxInFlight;
  }

  private businessMayStart(business: string): boolean {
    if ((this.inFlightFor.get(business) ?? 0) < this.limits.perBusiness) return true;
    return this.limits.concurrency - this.workingAttempts.size > this.limits.reserved;
  }

  /** Attempts started in order, so the stalled ones are at the front. */
  private markStalled(now: number): void {
    for (const [id, startedAt] of this.workingAttempts) {
      if (now - startedAt < this.limits.stalledAfterMs) break;
      this.workingAttempts.delete(id);
    }
  }

  /** The first delivery of the next endpoint in turn with a slot free; that endpoint goes to the back. */
  private nextOf(endpoints: Map<string, D[]>): D | undefined {
    for (const [endpoint, queue] of endpoints) {
      if ((this.inFlightTo.get(endpoint) ?? 0) >= this.limits.perEndpoint) continue;
      const delivery = queue.shift()!;
      endpoints.delete(endpoint);
      if (queue.length > 0) endpoints.set(endpoint, queue);
      return delivery;
    }
    return undefined;
  }

  private count(delivery: D, step: 1 | -1): void {
    this.inFlightCount += step;
    bump(this.inFlightTo, delivery.endpoint_id, step);
    bump(this.inFlightFor, businessKey(delivery), step);
  }
}

function businessKey(delivery: Pick<Schedulable, 'business_id' | 'environment'>): string {
  return `${delivery.business_id}/${delivery.environment}`;
}

function bump(counts: Map<string, number>, key: string, step: number): void {
  const next = (counts.get(key) ?? 0) + step;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
