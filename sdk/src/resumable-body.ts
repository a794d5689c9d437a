import { sleep } from './client.ts';
import { ConnectionError, ServerError, ValiseError } from './errors.ts';

// A download link's body that survives a dropped connection: when a read
// fails, the link is opened again with `Range: bytes=<received>-` and the
// stream goes on where it broke off. The link was paid for (one counted
// download) when it was issued; reopening it costs nothing, for as long as it
// is valid (300 seconds from issue).

export type Open = (range: string | undefined) => Promise<Response>;

export function resumableBody(
  open: Open,
  options: { maxResumes: number; signal?: AbortSignal | undefined; onResume?: (offset: number) => void },
): ReadableStream<Uint8Array> {
  let received = 0;
  let resumes = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  const connect = async () => {
    const resuming = received > 0;
    const response = await open(resuming ? `bytes=${received}-` : undefined);
    const start = Number(/^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1]);
    if (resuming && (response.status !== 206 || start !== received)) {
      await response.body?.cancel();
      throw new ValiseError({
        code: 'unexpected_response',
        status: response.status,
        message: `resuming at byte ${received}, the server answered ${response.status} from byte ${start}`,
      });
    }
    if (!response.body) throw new ValiseError({ code: 'unexpected_response', message: 'a download without a body' });
    reader = response.body.getReader();
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        try {
          if (!reader) await connect();
          const next = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
          if (next.done) return controller.close();
          received += next.value.length;
          return controller.enqueue(next.value);
        } catch (error) {
          reader = undefined;
          if (options.signal?.aborted || !resumable(error) || resumes >= options.maxResumes) throw error;
          await sleep(Math.min(8000, 250 * 2 ** resumes++), options.signal);
          options.onResume?.(received);
        }
      }
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}

/** Broken connections (fetch's TypeError mid-body, the SDK's ConnectionError) and 5xx answers. */
function resumable(error: unknown): boolean {
  if (error instanceof ValiseError) return error instanceof ConnectionError || error instanceof ServerError;
  return error instanceof TypeError;
}
