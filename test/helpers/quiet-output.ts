/**
 * A setup file of every project (vitest.config.ts): what the code under
 * test writes straight to stdout and stderr (Powertools' logger and EMF
 * metrics write there through a Console of their own, not the global one)
 * goes through the global console instead, which vitest attributes to the
 * running test. With `silent: 'passed-only'` a passing test's lines are
 * dropped and a failed test's are printed beside its failure, so a passing
 * run is a page of results and a failure keeps its logs.
 *
 * A test that spies on process.stdout.write (to read EMF lines) replaces
 * this for its own duration and sees every line, as before.
 */

type Write = typeof process.stdout.write;

/**
 * Set while a line goes to the console: should the console itself write
 * to the stream (vitest run with --disableConsoleIntercept), the line goes
 * straight out instead of round again.
 */
let emitting = false;

function throughConsole(
  stream: NodeJS.WriteStream,
  emit: (text: string) => void,
): void {
  const original = stream.write.bind(stream) as Write;
  const write = (
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean => {
    if (emitting) {
      return (original as (...args: unknown[]) => boolean)(
        chunk,
        encoding,
        callback,
      );
    }
    const text =
      typeof chunk === 'string'
        ? chunk
        : Buffer.from(chunk).toString(
            typeof encoding === 'string' ? encoding : 'utf8',
          );
    // console adds its own newline.
    emitting = true;
    try {
      emit(text.endsWith('\n') ? text.slice(0, -1) : text);
    } finally {
      emitting = false;
    }
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done) queueMicrotask(() => done(null));
    return true;
  };
  stream.write = write as Write;
}

throughConsole(process.stdout, (text) => console.log(text));
throughConsole(process.stderr, (text) => console.error(text));
