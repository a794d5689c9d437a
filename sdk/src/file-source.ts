/** A file `transfers.send` can upload: its bytes stream again from any offset, so an upload resumes. */
export interface FileSource {
  name: string;
  /** Bytes. It must not change during an upload, or its resumption. */
  size: number;
  /** MIME type; default `application/octet-stream`. */
  type?: string | undefined;
  /** The file's bytes from `start` to the end. */
  stream(start: number): ReadableStream<Uint8Array>;
}
