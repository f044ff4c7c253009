import { Type, type Static } from 'typebox';
import { AUDIT_ACTOR_KINDS } from '../../db/schema.js';
import { literalUnion, Nullable, Timestamp } from '../../http/schemas.js';
import { AUDIT_ACTIONS, type AuditAction } from './actions.js';
import type { AuditRow } from './store.js';

/** An audit entry as the API answers it. */
export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    action: literalUnion(AUDIT_ACTIONS),
    createdAt: Timestamp,
    environment: Nullable(
      literalUnion(['test', 'live'] as const, {
        description: 'the mode the act belongs to; null for the acts of no mode (the team, settings, the operator)',
      }),
    ),
    actor: Type.Object({
      kind: literalUnion(AUDIT_ACTOR_KINDS),
      id: Nullable(Type.String({ description: "the user's or the key's id; null for the operator and the platform" })),
      label: Nullable(Type.String({ description: "the user's email, the key's hint (never its secret), `operator`" })),
    }),
    ip: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    target: Nullable(Type.Object({ kind: Type.String(), id: Type.String() })),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: 'what the act changed: field names, amounts, never a secret',
    }),
  },
  { title: 'AuditEntry' },
);

export type AuditEntryView = Static<typeof AuditEntry>;

export function auditEntryView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    action: row.action as AuditAction,
    createdAt: row.created_at.toISOString(),
    environment: row.environment,
    actor: { kind: row.actor_kind, id: row.actor_id, label: row.actor_label },
    ip: row.ip,
    userAgent: row.user_agent,
    target: row.target_kind !== null && row.target_id !== null ? { kind: row.target_kind, id: row.target_id } : null,
    details: row.details,
  };
}
