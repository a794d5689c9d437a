import type { HttpClient, QueryValue, RequestOptions } from '../client.ts';
import { type ListEnvelope, PageRequest } from '../pagination.ts';
import { type RouteName, resolveRoute } from '../routes.ts';

export type CallInput = {
  params?: Record<string, string>;
  query?: object | undefined;
  body?: unknown;
  options?: RequestOptions | undefined;
  authenticate?: boolean;
};

/** What every resource namespace shares: calls built from the route table. */
export abstract class Resource {
  protected readonly http: HttpClient;

  constructor(http: HttpClient) {
    this.http = http;
  }

  protected async call<T>(route: RouteName, input: CallInput = {}): Promise<T> {
    const { method, path } = resolveRoute(route, input.params);
    return this.http.json<T>({
      ...input.options,
      method,
      path,
      query: input.query as Record<string, QueryValue> | undefined,
      body: input.body,
      authenticate: input.authenticate,
    });
  }

  /** A list call: awaitable for its first page, async-iterable for every item. */
  protected paged<T, E extends ListEnvelope<T> = ListEnvelope<T>>(
    route: RouteName,
    input: CallInput = {},
  ): PageRequest<T, E> {
    return new PageRequest<T, E>((cursor) =>
      this.call<E>(route, { ...input, query: { ...input.query, ...(cursor === undefined ? {} : { cursor }) } }),
    );
  }

  /** GETs a capability URL (a download link): no API key, body unread (a stream), `range` a `Range` value. */
  protected fetchLink(url: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.http.send({
      ...options,
      method: 'GET',
      path: url,
      authenticate: false,
      headers: { accept: '*/*', ...(options.range ? { range: options.range } : {}) },
      timeoutMs: options.timeoutMs ?? this.http.transferTimeoutMs,
    });
  }
}
