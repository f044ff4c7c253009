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
 * starts as soon as it is claimed.
 */
export class DeliveryScheduler<D extends Schedulable> {
  private readonly held = new Map<string, D>();
  /** Queued deliveries per business (and environment), then per endpoint; both maps in turn order. */
  private readonly queues = new Map<string, Map<string, D[]>>();
  private readonly inFlightTo = new Map<string, number>();
  private readonly inFlightFor = new Map<string, number>();
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

  get inFlight(): number {
    return this.inFlightCount;
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

  /** The deliveries to send now, each counted in flight until `finished`. */
  takeStartable(): D[] {
    const started: D[] = [];
    for (let progress = true; progress && this.inFlightCount < this.limits.concurrency;) {
      progress = false;
      for (const [business, endpoints] of [...this.queues]) {
        if (this.inFlightCount >= this.limits.concurrency) break;
        if (!this.businessMayStart(business)) continue;
        const delivery = this.nextOf(endpoints);
        if (!delivery) continue;
        this.queues.delete(business);
        if (endpoints.size > 0) this.queues.set(business, endpoints);
        this.count(delivery, +1);
        started.push(delivery);
        progress = true;
      }
    }
    return started;
  }

  /** An attempt ended (its outcome still to be written): its slot is free. */
  finished(delivery: D): void {
    this.count(delivery, -1);
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

  private businessMayStart(business: string): boolean {
    if ((this.inFlightFor.get(business) ?? 0) < this.limits.perBusiness) return true;
    return this.limits.concurrency - this.inFlightCount > this.limits.reserved;
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
