const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A one-line status shown while nothing else is printed: `⠋ waiting for pi · 3s`. It redraws
 * itself in place and erases itself before anything else is written to the same stream.
 */
export class Spinner {
  readonly #write: (text: string) => void;
  #label = '';
  #since = 0;
  #frame = 0;
  #timer: NodeJS.Timeout | undefined;
  #shown = false;

  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /** Shows `label` after a short pause, so quick gaps do not flicker. */
  start(label: string): void {
    this.stop();
    this.#label = label;
    this.#since = performance.now();
    // unref: a spinner never keeps the process alive.
    this.#timer = setInterval(() => {
      this.#draw();
    }, 100);
    this.#timer.unref();
  }

  /** Erases the line, if shown, and stops redrawing. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#shown) this.#write('\r\u001b[2K');
    this.#shown = false;
  }

  #draw(): void {
    const elapsed = performance.now() - this.#since;
    if (elapsed < 300) return;
    this.#frame = (this.#frame + 1) % FRAMES.length;
    const seconds = Math.floor(elapsed / 1000);
    this.#write(`\r\u001b[2K${FRAMES[this.#frame] ?? ''} ${this.#label}${seconds > 0 ? ` · ${String(seconds)}s` : ''}`);
    this.#shown = true;
  }
}
