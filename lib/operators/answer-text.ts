/**
 * A run's answer as its model messages, from the flat `assistant` stream: the deltas as they
 * came (appended, and withdrawn from the end) and where each model message after the first
 * begins. A new model message begins with the first text after a tool message that followed
 * text. Both views are derived from that raw text and those offsets: `text` (every message,
 * kept apart by a blank line) and `finalText` (the last message).
 *
 * A withdrawal may reach back over a message boundary: the agent changed an earlier message, and
 * the change comes as a withdrawal of everything after it, its new text, then the later messages'
 * text again (`snapshotToDelta` does so). The later messages and their boundaries are kept aside
 * and put back, at the same distance from the end, once the text ends with them again; until then
 * (and for good when they do not come back) new text belongs to the message the cut is in.
 */
export class AnswerText {
  #raw = '';
  /** Where each model message after the first begins in `#raw`, ascending. */
  #starts: number[] = [];
  /** A tool message came after the current message's text: the next text begins a new message. */
  #afterTool = false;
  /**
   * The messages a withdrawal took back whole, from the first boundary it reached over (`text`,
   * with their boundaries at these offsets), in case they come back; `at` is where it cut.
   */
  #rewound: { readonly at: number; readonly text: string; readonly starts: readonly number[] } | null = null;

  /** An `assistant` delta. */
  append(delta: string): void {
    if (delta === '') return;
    if (this.#afterTool) {
      this.#afterTool = false;
      // (A withdrawal may have emptied the message the tool followed: then there is nothing to keep apart.)
      if (this.#raw.length > (this.#starts.at(-1) ?? 0)) this.#starts.push(this.#raw.length);
    }
    this.#raw += delta;
    const rewound = this.#rewound;
    if (rewound !== null && this.#raw.length - rewound.at >= rewound.text.length && this.#raw.endsWith(rewound.text)) {
      // The withdrawn messages came back after the change: their boundaries go back with them.
      this.#rewound = null;
      const base = this.#raw.length - rewound.text.length;
      this.#starts = [...this.#starts.filter((start) => start < rewound.at), ...rewound.starts.map((start) => base + start)];
    }
  }

  /** An `assistant.withdrawn`: the text so far ends with `text`, which is taken back. */
  withdraw(text: string): void {
    const cut = Math.max(0, this.#raw.length - text.length);
    const inside = this.#starts.filter((start) => start >= cut);
    const first = inside[0];
    this.#rewound = first === undefined ? null : { at: cut, text: this.#raw.slice(first), starts: inside.map((start) => start - first) };
    this.#raw = this.#raw.slice(0, cut);
    // A message that began where the cut is stays open: what replaces its text is its text.
    this.#starts = this.#starts.filter((start) => start <= cut);
  }

  /** A `tool.*` message: after text, the model's next text is a new message. */
  tool(): void {
    this.#rewound = null;
    if (this.#raw.length > (this.#starts.at(-1) ?? 0)) this.#afterTool = true;
  }

  /** Every model message's text, in order, empty ones left out, kept apart by a blank line. */
  get text(): string {
    let joined = '';
    for (const message of this.#messages()) {
      if (message === '') continue;
      joined = joined === '' ? message : joined + separator(joined, message) + message;
    }
    return joined;
  }

  /** The last model message's text: empty when the run's last tool message came after all its text. */
  get finalText(): string {
    return this.#afterTool ? '' : this.#raw.slice(this.#starts.at(-1) ?? 0);
  }

  #messages(): string[] {
    const bounds = [0, ...this.#starts, this.#raw.length];
    return bounds.slice(1).map((end, i) => this.#raw.slice(bounds[i], end));
  }
}

/** What keeps two messages apart: a blank line, less the line breaks already there. */
function separator(before: string, after: string): string {
  const present = trailingBreaks(before) + leadingBreaks(after);
  return '\n'.repeat(Math.max(0, 2 - present));
}

function trailingBreaks(text: string): number {
  let count = 0;
  while (count < 2 && text.charAt(text.length - 1 - count) === '\n') count += 1;
  return count;
}

function leadingBreaks(text: string): number {
  let count = 0;
  while (count < 2 && text.charAt(count) === '\n') count += 1;
  return count;
}
