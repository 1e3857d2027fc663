import { createTransport } from 'nodemailer';

// The one place that talks SMTP. Built from SMTP_URL (smtp:// or smtps://, credentials in the
// URL, nodemailer's query options honoured) and MAIL_FROM. The credentials never leave this file:
// `describe()` names the server without them, and error messages are scrubbed of them before
// anyone can log or store them.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative to the text (reports by mail). */
  html?: string;
  /** A one-click unsubscribe URL: sent as List-Unsubscribe with List-Unsubscribe-Post (RFC 8058). */
  listUnsubscribe?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** The server as it may be logged: scheme, host and port, never the credentials. */
  describe(): string;
  /** An error's message with every form of the credentials replaced. */
  scrub(error: unknown): string;
  close(): void;
}

const REDACTED = '[redacted]';

// Short timeouts: a hanging server must fail an attempt (and be retried later), not hold the
// worker for nodemailer's default 10 minutes.
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

function secretsOf(url: URL): string[] {
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  };
  const user = decode(url.username);
  const pass = decode(url.password);
  const secrets = [url.password, pass, user && pass ? Buffer.from(`\u0000${user}\u0000${pass}`).toString('base64') : ''];
  // The user name alone is redacted too when it is long enough not to erase ordinary words.
  if (user.length >= 4) secrets.push(url.username, user, Buffer.from(user).toString('base64'));
  if (pass) secrets.push(Buffer.from(pass).toString('base64'));
  return [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  const url = new URL(smtpUrl);
  const secrets = secretsOf(url);
  const transport = createTransport({ url: smtpUrl, ...TIMEOUTS });
  const scrubText = (text: string) => secrets.reduce((out, secret) => out.split(secret).join(REDACTED), text);

  return {
    async send(message) {
      await transport.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html ? { html: message.html } : {}),
        ...(message.listUnsubscribe
          ? { headers: { 'List-Unsubscribe': `<${message.listUnsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }
          : {}),
      });
    },
    describe: () => `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}`,
    scrub(error) {
      const message = error instanceof Error ? error.message : String(error);
      return scrubText(message || 'Unknown mail error').slice(0, 1000);
    },
    close: () => transport.close(),
  };
}
