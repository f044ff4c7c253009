import { PageList, type HttpClient, type Page, type RequestOptions } from './client.js';
import type { operations } from './generated/openapi.js';
import type { ItemOf, QueryOf } from './types.js';

export const path = (value: string) => encodeURIComponent(value);

export abstract class Resource {
  constructor(protected readonly http: HttpClient) {}

  protected paginate<K extends keyof operations>(
    route: string,
    query: QueryOf<K> | undefined,
    options?: RequestOptions,
  ) {
    const params = { ...(query as Record<string, unknown> | undefined) };
    const start = typeof params.page === 'number' ? params.page : 1;
    return new PageList<ItemOf<K>>(
      (page) => this.http.request<Page<ItemOf<K>>>({ method: 'GET', path: route, query: { ...params, page } }, options),
      start,
    );
  }
}
