// Lists answer `{object: "list", data, has_more, next_cursor, limit, offset}`.
// `list()` returns a PageRequest: `await` it for one page, or `for await` it
// for every item, following `next_cursor` until `has_more` is false.

export type ListEnvelope<T> = {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  limit: number;
  offset: number | null;
};

/** Fetches the page that starts at `cursor` (undefined: the first page). */
export type PageFetcher<T, E extends ListEnvelope<T>> = (cursor: string | undefined) => Promise<E>;

export class Page<T, E extends ListEnvelope<T> = ListEnvelope<T>> {
  readonly data: T[];
  readonly hasMore: boolean;
  readonly nextCursor: string | null;
  /** The whole answer, members specific to a list included (`envelope` of the event catalog, say). */
  readonly envelope: E;
  readonly #fetchPage: PageFetcher<T, E>;

  constructor(envelope: E, fetchPage: PageFetcher<T, E>) {
    this.envelope = envelope;
    this.data = envelope.data;
    this.hasMore = envelope.has_more;
    this.nextCursor = envelope.next_cursor;
    this.#fetchPage = fetchPage;
  }

  /** The following page, or null at the end. The end is `has_more: false`; a short page means nothing. */
  async next(): Promise<Page<T, E> | null> {
    if (!this.hasMore || this.nextCursor === null) return null;
    return new Page(await this.#fetchPage(this.nextCursor), this.#fetchPage);
  }
}

export class PageRequest<T, E extends ListEnvelope<T> = ListEnvelope<T>>
  implements PromiseLike<Page<T, E>>, AsyncIterable<T>
{
  readonly #fetchPage: PageFetcher<T, E>;
  #first: Promise<Page<T, E>> | undefined;

  constructor(fetchPage: PageFetcher<T, E>) {
    this.#fetchPage = fetchPage;
  }

  /** The first page (fetched once, however many times it is awaited). */
  firstPage(): Promise<Page<T, E>> {
    this.#first ??= this.#fetchPage(undefined).then((envelope) => new Page(envelope, this.#fetchPage));
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: being awaitable is the point: `await list()` is the first page.
  then<R1 = Page<T, E>, R2 = never>(
    onFulfilled?: ((page: Page<T, E>) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  /** Every item of every page, one page in memory at a time. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page: Page<T, E> | null = await this.firstPage();
    while (page) {
      yield* page.data;
      page = await page.next();
    }
  }

  /** Every item, collected into an array: for lists known to be small. */
  async toArray(): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) items.push(item);
    return items;
  }
}
