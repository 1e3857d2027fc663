import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

// A real SMTP server on 127.0.0.1 (smtp-server) that keeps every message it receives, so a test
// can point SMTP_URL at it and wait for the next mail to an address. The parsing is the minimum
// nodemailer's plain-text messages need: unfolded headers, a quoted-printable or base64 body.

export interface ReceivedMail {
  /** The user the client authenticated as, when it did. */
  user: string | undefined;
  mailFrom: string;
  rcptTo: string[];
  headers: Record<string, string>;
  subject: string;
  text: string;
}

export interface SmtpInbox {
  /** smtp://127.0.0.1:<port>, for Config.smtpUrl / SMTP_URL. */
  url: string;
  /** Every message received so far, oldest first. */
  received: ReceivedMail[];
  /** The recipients of each message a rejecting server refused. */
  refused: string[][];
  /** Every message received so far to `address`, oldest first. */
  mailsTo(address: string): ReceivedMail[];
  /**
   * The first message to `address` that no earlier call returned, waiting for it up to
   * `timeoutMs`; each message is handed out once.
   */
  nextMailTo(address: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
  return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/gi, '%25'));
}

export function parseMessage(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n(?=[ \t])/g, '');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let text = raw.slice(split + 4);
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) text = decodeQuotedPrintable(text);
  else if (/base64/i.test(headers['content-transfer-encoding'] ?? '')) text = Buffer.from(text, 'base64').toString('utf8');
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

export interface SmtpInboxOptions {
  /** Credentials the server accepts (others are refused); the URL then carries them. */
  auth?: { user: string; pass: string };
  /** Refuse every message with this reply (code 554), recording its recipients in `refused`. */
  rejectWith?: string;
}

export async function startSmtpInbox(options: SmtpInboxOptions = {}): Promise<SmtpInbox> {
  const received: ReceivedMail[] = [];
  const refused: string[][] = [];
  const handedOut = new Set<ReceivedMail>();
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const rcptTo = session.envelope.rcptTo.map((address) => address.address);
        if (options.rejectWith) {
          refused.push(rcptTo);
          callback(Object.assign(new Error(options.rejectWith), { responseCode: 554 }));
          return;
        }
        const parsed = parseMessage(Buffer.concat(chunks).toString('utf8'));
        received.push({
          user: typeof session.user === 'string' ? session.user : undefined,
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo,
          subject: parsed.headers.subject ?? '',
          ...parsed,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  async function nextMailTo(address: string, timeoutMs = 15_000): Promise<ReceivedMail> {
    const wanted = address.toLowerCase();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mail = received.find((m) => !handedOut.has(m) && m.rcptTo.some((to) => to.toLowerCase() === wanted));
      if (mail) {
        handedOut.add(mail);
        return mail;
      }
      if (Date.now() > deadline) {
        const seen = received.map((m) => `${m.rcptTo.join(',')}: ${m.subject}`).join('\n  ') || '(none)';
        throw new Error(`no new e-mail to ${address} within ${timeoutMs} ms; received:\n  ${seen}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    refused,
    mailsTo: (address) => received.filter((mail) => mail.rcptTo.some((to) => to.toLowerCase() === address.toLowerCase())),
    nextMailTo,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The text and HTML parts of a multipart/alternative message (what nodemailer sends with both
 * `text` and `html`), each decoded; a single-part message gives its body as `text`.
 */
export function alternativeParts(mail: Pick<ReceivedMail, 'headers' | 'text'>): { text?: string; html?: string } {
  const boundary = /boundary="?([^";]+)"?/i.exec(mail.headers['content-type'] ?? '')?.[1];
  if (!boundary) return { text: mail.text };
  const out: { text?: string; html?: string } = {};
  for (const chunk of mail.text.split(`--${boundary}`).slice(1)) {
    if (chunk.startsWith('--')) break;
    const part = parseMessage(chunk.replace(/^\n/, '').replace(/\n/g, '\r\n'));
    const type = part.headers['content-type'] ?? '';
    if (/text\/plain/i.test(type)) out.text = part.text.replace(/\n$/, '');
    else if (/text\/html/i.test(type)) out.html = part.text.replace(/\n$/, '');
  }
  return out;
}
