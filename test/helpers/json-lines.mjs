/**
 * Messages as JSON, one a line, over a stream: the channel between the
 * runtime's stand-in (lambda-runtime.mjs, which runs with no loader, hence
 * plain JavaScript) and the process that started it (lambda-process.ts).
 */

/** Writes `message` as one line. */
export function writeJsonLine(stream, message) {
  stream.write(`${JSON.stringify(message)}\n`);
}

/** Calls `receive` with each message read from `stream`, in order. */
export function onJsonLines(stream, receive) {
  let buffered = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end !== -1; ) {
      receive(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf('\n');
    }
  });
}
