/**
 * Everything the CLI prints goes through here. With `--json`, stdout carries exactly one JSON document
 * (the result, or `{"error": {...}}`) and nothing else is printed, except by `worker`, which writes one
 * JSON line per event. Without it, results are tables and `key: value` blocks on stdout, and notes and
 * progress go to stderr so they never mix with what a pipe reads.
 */

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /** Longest cell before it is cut with an ellipsis. */
  max?: number;
}

export interface Progress {
  /** Replaces the progress text (shown on a terminal; ignored otherwise). */
  update(text: string): void;
  /** Removes the progress line; prints `final` (if given) to stderr. */
  done(final?: string): void;
}

const cut = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {}

  /** The command's result: JSON with `--json`, else what `human` prints. */
  result(value: unknown, human: () => void): void {
    if (this.json) this.writeJson(value);
    else human();
  }

  writeJson(value: unknown, pretty = true): void {
    this.stdout.write(`${JSON.stringify(value, null, pretty ? 2 : undefined)}\n`);
  }

  line(text = ''): void {
    this.stdout.write(`${text}\n`);
  }

  /** A note for people (stderr); silent with `--json`. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** A warning (stderr), shown even with `--json` since it does not touch stdout. */
  warn(text: string): void {
    this.stderr.write(`warning: ${text}\n`);
  }

  /** Aligned `label: value` lines; undefined values are left out. */
  fields(pairs: [string, string | number | boolean | null | undefined][]): void {
    const shown = pairs.filter(([, value]) => value !== undefined);
    const width = Math.max(0, ...shown.map(([label]) => label.length));
    for (const [label, value] of shown) {
      this.line(`${`${label}:`.padEnd(width + 2)}${value === null ? '-' : String(value)}`);
    }
  }

  table<Row>(rows: Row[], columns: Column<Row>[], empty = 'nothing found'): void {
    if (rows.length === 0) {
      this.line(`(${empty})`);
      return;
    }
    const cells = rows.map((row) => columns.map((column) => cut(column.value(row), column.max ?? 60)));
    const widths = columns.map((column, index) =>
      Math.max(column.header.length, ...cells.map((row) => (row[index] ?? '').length)),
    );
    const format = (row: string[]) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
        .join('  ')
        .trimEnd();
    this.line(format(columns.map((column) => column.header.toUpperCase())));
    for (const row of cells) this.line(format(row));
  }

  /**
   * Shows that something is waiting: a live line with the elapsed seconds on a terminal, one line
   * otherwise. Silent with `--json`.
   */
  progress(text: string): Progress {
    if (this.json) return { update: () => undefined, done: () => undefined };
    const started = Date.now();
    let current = text;
    if (!this.stderr.isTTY) {
      this.stderr.write(`${text}\n`);
      return {
        update: (next) => {
          current = next;
        },
        done: (final) => {
          if (final) this.stderr.write(`${final}\n`);
        },
      };
    }
    const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let frame = 0;
    const draw = () => {
      const seconds = Math.floor((Date.now() - started) / 1000);
      this.stderr.write(`\r\x1b[2K${frames[frame++ % frames.length]} ${current} (${seconds}s)`);
    };
    draw();
    const timer = setInterval(draw, 100);
    timer.unref();
    return {
      update: (next) => {
        current = next;
        draw();
      },
      done: (final) => {
        clearInterval(timer);
        this.stderr.write('\r\x1b[2K');
        if (final) this.stderr.write(`${final}\n`);
      },
    };
  }
}
