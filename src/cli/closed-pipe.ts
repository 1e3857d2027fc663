// `sightline websites list | head -1`: once the reader has what it wants it closes the pipe, and
// the next write fails with EPIPE. That is the reader's choice, not an error: end at once and
// quietly, as `cat` and `ls` do when SIGPIPE ends them.

function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** For commands whose output is read by a pipe (all but the server, whose log must not end it silently). */
export function endQuietlyOnClosedPipes(): void {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
}
