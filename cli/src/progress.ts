import { formatBytes } from './output.ts';
import { visible } from './terminal.ts';

// Progress on stderr: on a terminal, a bar per file redrawn in place, with the
// throughput of the whole command; otherwise (a pipe, a log file, CI) a plain
// line every PLAIN_INTERVAL_MS and one when each file ends, nothing redrawn.

const PLAIN_INTERVAL_MS = 500;
const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH = 24;

export type ProgressFile = { name: string; size: number };

export class Progress {
  readonly #files: ProgressFile[];
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #started = Date.now();
  #lastWrite = 0;
  #current = -1;
  #bytesThisRun = 0;
  #done = new Set<number>();

  constructor(files: ProgressFile[], out: NodeJS.WriteStream = process.stderr) {
    this.#files = files;
    this.#out = out;
    this.#tty = Boolean(out.isTTY);
  }

  /** `bytes`: of file `index` so far (resumed bytes included); `movedThisRun`: bytes this command moved. */
  update(index: number, bytes: number, movedThisRun: number): void {
    if (index !== this.#current && this.#current >= 0 && !this.#done.has(this.#current)) this.fileDone(this.#current);
    this.#current = index;
    this.#bytesThisRun = movedThisRun;
    const now = Date.now();
    const file = this.#files[index];
    const finished = file !== undefined && bytes >= file.size;
    if (!finished && now - this.#lastWrite < (this.#tty ? REDRAW_INTERVAL_MS : PLAIN_INTERVAL_MS)) return;
    this.#lastWrite = now;
    this.#write(index, bytes, false);
  }

  fileDone(index: number): void {
    if (this.#done.has(index)) return;
    this.#done.add(index);
    this.#write(index, this.#files[index]?.size ?? 0, true);
  }

  #write(index: number, bytes: number, final: boolean): void {
    const file = this.#files[index];
    if (!file) return;
    const percent = file.size === 0 ? 100 : Math.floor((bytes / file.size) * 100);
    const counter = this.#files.length > 1 ? `[${index + 1}/${this.#files.length}] ` : '';
    const name = visible(file.name); // a sender's name: shown, never interpreted by the terminal
    const amounts = `${formatBytes(bytes)} / ${formatBytes(file.size)}`;
    const rate = `${formatBytes(this.#throughput())}/s`;
    if (this.#tty) {
      const filled = Math.round((percent / 100) * BAR_WIDTH);
      const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
      this.#out.write(`\r\x1b[2K${counter}${name}  ${bar} ${String(percent).padStart(3)}%  ${amounts}  ${rate}`);
      if (final) this.#out.write('\n');
    } else {
      this.#out.write(`${counter}${name}: ${amounts} (${percent}%), ${rate}${final ? ', done' : ''}\n`);
    }
  }

  #throughput(): number {
    const seconds = (Date.now() - this.#started) / 1000;
    return seconds > 0 ? Math.round(this.#bytesThisRun / seconds) : 0;
  }

  /** A summary line for the whole command. */
  summary(verb: string): string {
    const seconds = (Date.now() - this.#started) / 1000;
    const total = this.#files.reduce((sum, file) => sum + file.size, 0);
    const count = `${this.#files.length} file${this.#files.length === 1 ? '' : 's'}`;
    return `${verb} ${count} (${formatBytes(total)}) in ${seconds.toFixed(1)} s, ${formatBytes(this.#throughput())}/s`;
  }
}
