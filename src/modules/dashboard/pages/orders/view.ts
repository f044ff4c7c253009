import type { OrderRow } from '../../../orders/model.js';
import type { ORDER_STATUSES, OrderAction } from '../../../orders/state.js';
import type { orderView } from '../../../orders/views.js';
import type { FormState, RefundNote } from '../../view-types.js';
import type { paymentAttempts, sourceAmounts } from '../../queries.js';
import type { SplitRow } from '../../split.js';

/** The workflow buttons an order's page draws (a customer's cancel is the customer's, never a button here). */
type OrderActions = Record<Exclude<OrderAction, 'customerCancel'>, boolean>;

/** What the Orders pages' templates draw: the list, and an order with its workflow and modification form. */
export interface OrderViews {
  orders: {
    orders: OrderRow[];
    refundNote: RefundNote;
    total: number;
    page: number;
    pages: number;
    status: string;
    q: string;
    filterQuery: string;
    statuses: typeof ORDER_STATUSES;
  };
  order: FormState & {
    amounts: Awaited<ReturnType<typeof sourceAmounts>>;
    attempts: Awaited<ReturnType<typeof paymentAttempts>>;
    /** What the order's payment gave each seller of its lines' products. */
    split: SplitRow[];
    refundNote: RefundNote;
    order: ReturnType<typeof orderView>;
    actions: OrderActions;
    refundable: number;
    blankRows: number;
    /** The modification form's picker: `productId` or `productId~variantId`, with its unit price. */
    choices: { value: string; label: string }[];
    /** The modification form as posted, drawn again when refused. */
    typed: { picks: string[]; quantities: string[] } | null;
  };
}
