// A paged list: awaited, the first page's result; iterated with `for await`, every item of every page, following
// `nextCursor` (a deep page costs the server no more than the first).
import type { PostcodeError, Result } from './http.js';

/** Thrown inside `for await` over a list when a page cannot be read (a call itself never throws). */
export class PostcodeRequestError extends Error {
  constructor(readonly error: PostcodeError) {
    super(`${error.code}: ${error.message}`);
    this.name = 'PostcodeRequestError';
  }
}

type Page = { nextCursor: string | null };

export class PagedList<P extends Page, Item> implements PromiseLike<Result<P>>, AsyncIterable<Item> {
  constructor(
    private readonly read: (after: string | undefined) => Promise<Result<P>>,
    private readonly items: (page: P) => Item[],
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: a list is awaited for its first page
  then<A = Result<P>, B = never>(
    onfulfilled?: ((value: Result<P>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this.read(undefined).then(onfulfilled, onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    let after: string | undefined;
    do {
      const { data, error } = await this.read(after);
      if (error) throw new PostcodeRequestError(error);
      yield* this.items(data);
      after = data.nextCursor ?? undefined;
    } while (after);
  }
}
