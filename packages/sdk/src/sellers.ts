import type { RequestOptions } from './client.js';
import { path, Resource } from './resource.js';
import type { Balance, BalanceStatement, QueryOf, Seller, SellerInput, SellerUpdate } from './types.js';

/**
 * A marketplace's sellers (secret key, scopes `sellers:write` / `sellers:read`): each `SL-` seller
 * has its own balance under the business, its balance transactions
 * (`balance.transactions.list({ seller })`), payouts (`payouts.create({ seller, amount })`) and statements.
 */
export class Sellers extends Resource {
  /** `name`, `phone` (E.164, where its payouts go), `commissionBps` (0 by default), `payoutSchedule` (MANUAL by default, or DAILY); VALIDATION_ERROR names a bad field. */
  create(body: SellerInput, options?: RequestOptions) {
    return this.http.request<Seller>({ method: 'POST', path: '/sellers', body }, options);
  }
  /** By its `SL-` id. */
  retrieve(id: string, options?: RequestOptions) {
    return this.http.request<Seller>({ method: 'GET', path: `/sellers/${path(id)}` }, options);
  }
  /** Newest first; filter `status`. */
  list(query?: QueryOf<'listSellers'>, options?: RequestOptions) {
    return this.paginate<'listSellers'>('/sellers', query, options);
  }
  /** PATCH: only the fields sent change; `status: 'DISABLED'` takes the seller out of new splits. */
  update(id: string, body: SellerUpdate, options?: RequestOptions) {
    return this.http.request<Seller>({ method: 'PATCH', path: `/sellers/${path(id)}`, body }, options);
  }
  /** What the seller's own account holds, in the shape of `balance.retrieve()`. */
  balance(id: string, options?: RequestOptions) {
    return this.http.request<Balance>({ method: 'GET', path: `/sellers/${path(id)}/balance` }, options);
  }
  /** The seller's statement of a UTC month (`YYYY-MM`), in the shape of `balance.statements.retrieve()` (scope `balance:read`). */
  statement(id: string, month: string, options?: RequestOptions) {
    return this.http.request<BalanceStatement>(
      { method: 'GET', path: `/balance/statements/${path(month)}`, query: { seller: id } },
      options,
    );
  }
}
