/** Every status of a webhook delivery: the one list the table type, schemas and filters derive from. */
export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'DEAD'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
