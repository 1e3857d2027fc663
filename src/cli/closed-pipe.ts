// `sightline websites list | head -1`: once the reader has what it wants it closes the pipe, and
// the next write fails with EPIPE. That is the reader's choice, not an error: end at once and
// quietly, as `cat` and `ls` do when SIGPIPE ends them.

function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    // Any other write failure (a full disk, an I/O error) ends in one line, not a stack trace;
    // stderr may be the stream that failed, so writing to it must not throw again.
    try {
      process.stderr.write(`sightline: cannot write the output: ${error.code ?? error.message}\n`);
    } catch {
      // Nothing left to report on.
    }
    process.exit(1);
  });
}

/** For commands whose output is read by a pipe (all but the server, whose log must not end it silently). */
export function endQuietlyOnClosedPipes(): void {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
}
