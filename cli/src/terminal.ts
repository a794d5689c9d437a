// Text from others (file names, titles, webhook URLs, the server's error
// messages, even the arguments echoed back in a usage error) must never drive
// the terminal: an ESC or an 8-bit CSI starts a control sequence (retitle the
// window, clear the screen, rewrite what was printed, on some terminals worse),
// a carriage return overwrites the line, and bidirectional overrides make
// `ftp.exe` read as something else. Every string the CLI prints goes through
// `visible`, which shows those characters as escapes (`\x1b`, `\u202e`), so a
// reader sees that a name is odd instead of having it act. JSON output stays
// exact JSON, with the same characters written as `\u` escapes.

// C0 controls, DEL, C1 controls (0x9b is CSI, 0x9d OSC on terminals that honour
// 8-bit controls), the Arabic letter mark, LRM/RLM, line and paragraph
// separators, and the bidi embeddings, overrides and isolates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE_KEEPING_LINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves raw (it already escapes C0 controls).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  return NAMED[character] ?? (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
}

const hex = (code: number, width: number) => code.toString(16).padStart(width, '0');

/**
 * `text` safe to write to a terminal: every control character and bidi override is shown as an
 * escape. One line unless `keepNewlines` (for the CLI's own multi-line text, in which values from
 * others were already made visible).
 */
export function visible(text: unknown, options: { keepNewlines?: boolean } = {}): string {
  return String(text).replace(options.keepNewlines ? UNSAFE_KEEPING_LINES : UNSAFE, escaped);
}

/**
 * JSON for stdout or stderr: exactly what JSON.stringify gives, parsing to the same value, but with
 * the characters above written as `\uXXXX` escapes so that printing it to a terminal is harmless.
 */
export function jsonText(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? 'null').replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${hex(c.codePointAt(0) ?? 0, 4)}`,
  );
}
