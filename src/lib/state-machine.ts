import { sql, type RawBuilder } from 'kysely';

/**
 * One action of a state machine, as data: the statuses it starts from, where it leads, and what
 * else must hold. A module adds what its callers read beside it (the event it sends, the reason it
 * writes), which the machine carries along untouched.
 */
export interface StateAction<Status extends string, Facts, Refusal> {
  readonly from: readonly [Status, ...Status[]];
  /** Where it leads; null: the status stays what it was. */
  readonly to: Status | null;
  /** What the status alone does not tell (an expiry, something left to refund): a refusal, or undefined. */
  readonly guard?: (facts: Facts, now: Date) => Refusal | undefined;
  /** What else the module's callers read beside the action: the event it sends, the reason it writes. */
  readonly [data: string]: unknown;
}

/** What any action is, whatever facts its guard reads: the bound of a machine's actions table. */
type AnyActions<Status extends string> = Record<string, StateAction<Status, never, Error>>;

/** The name of one of a machine's actions. */
export type ActionName<Actions> = Extract<keyof Actions, string>;

export interface StateMachineDefinition<
  Status extends string,
  Facts extends { status: Status },
  Refusal extends Error,
  Actions extends AnyActions<Status>,
> {
  /** Every status, the vocabulary's one list. */
  statuses: readonly Status[];
  /** The status a row is created with: the one status no action needs to lead to. */
  initial: NoInfer<Status>;
  // The statuses are read off `statuses` only (a misspelt one here is an error, not a new status);
  // the facts and the refusal off the guards and `refuse`.
  actions: Actions & Record<string, StateAction<NoInfer<Status>, Facts, Refusal>>;
  /** The refusal of `action` on facts whose status it does not start from. */
  refuse: (facts: Facts, action: ActionName<Actions>) => Refusal;
}

/** What `decide` answers: the status an allowed action leads to, or why it is refused. */
export type Decision<Status extends string, Refusal> =
  { allowed: true; to: Status } | { allowed: false; refusal: Refusal };

export interface StateMachine<
  Status extends string,
  Facts extends { status: Status },
  Refusal extends Error,
  Actions extends AnyActions<Status>,
> {
  readonly statuses: readonly Status[];
  readonly initial: Status;
  readonly actions: Actions;
  /** Whether `action` may happen at `now`, and the status it leads to: its `from`, then its guard. */
  decide(facts: Facts, action: ActionName<Actions>, now?: Date): Decision<Status, Refusal>;
  isAllowed(facts: Facts, action: ActionName<Actions>, now?: Date): boolean;
  /** The status `action` leads to, or its refusal thrown. */
  assert(facts: Facts, action: ActionName<Actions>, now?: Date): Status;
  fromStatuses(action: ActionName<Actions>): readonly Status[];
  /**
   * `column IN (...)` over the statuses `action` starts from, for a statement that picks the rows
   * it may change. Literals, not parameters: a prepared statement's generic plan can use a partial
   * index on the statuses only when they are written in its text.
   */
  sqlFilter(action: ActionName<Actions>, column?: string): RawBuilder<boolean>;
}

/**
 * A state machine from its one definition: every route, job, page and statement that changes or
 * picks rows by status asks it, so that no status list is written twice.
 */
export function defineStateMachine<
  const Status extends string,
  Facts extends { status: Status },
  Refusal extends Error,
  const Actions extends AnyActions<Status>,
>(definition: StateMachineDefinition<Status, Facts, Refusal, Actions>): StateMachine<Status, Facts, Refusal, Actions> {
  type Action = ActionName<Actions>;
  const { statuses, initial, actions, refuse } = definition;
  const table: Record<Action, StateAction<Status, Facts, Refusal>> = actions;
  const fromStatuses = (action: Action): readonly Status[] => table[action].from;
  const decide = (facts: Facts, action: Action, now = new Date()): Decision<Status, Refusal> => {
    const { to, guard } = table[action];
    if (!fromStatuses(action).includes(facts.status)) return { allowed: false, refusal: refuse(facts, action) };
    const refusal = guard?.(facts, now);
    if (refusal) return { allowed: false, refusal };
    return { allowed: true, to: to ?? facts.status };
  };
  return {
    statuses,
    initial,
    actions,
    decide,
    isAllowed: (facts, action, now) => decide(facts, action, now).allowed,
    assert(facts, action, now) {
      const decision = decide(facts, action, now);
      if (!decision.allowed) throw decision.refusal;
      return decision.to;
    },
    fromStatuses,
    sqlFilter: (action, column = 'status') =>
      sql<boolean>`${sql.ref(column)} IN (${sql.join(fromStatuses(action).map((status) => sql.lit(status)))})`,
  };
}
