/**
 * Mail (the console's email verification, notices to account owners), sent through the relay of
 * SMTP_URL with nodemailer. Without SMTP_URL no mail is sent and admins verify emails instead.
 */
import type { Transporter } from 'nodemailer';
import type { Config } from './config.ts';

export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/**
 * @example
 * const mailer = createMailer({ smtpUrl: 'smtp://127.0.0.1:2525', smtpFrom: 'agentauth <no-reply@id.example>' });
 * await mailer?.send({ to: 'ada@example.com', subject: 'Hello', text: '…' });
 */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'smtpFrom'>): Mailer | null {
  const { smtpUrl } = config;
  if (smtpUrl === null) return null;
  // nodemailer (about 15 MB resident) is loaded with the first mail, not at start.
  let transport: Promise<Transporter> | undefined;
  return {
    async send({ to, subject, text }) {
      transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl));
      await (await transport).sendMail({ from: config.smtpFrom, to, subject, text });
    },
  };
}
