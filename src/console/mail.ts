/**
 * Mail of the console (email verification), sent through the relay of SMTP_URL with nodemailer.
 * Without SMTP_URL no mail is sent and admins verify emails instead.
 */
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/**
 * @example
 * const mailer = createMailer({ smtpUrl: 'smtp://127.0.0.1:2525', smtpFrom: 'agentauth <no-reply@id.example>' });
 * await mailer?.send({ to: 'ada@example.com', subject: 'Hello', text: '…' });
 */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'smtpFrom'>): Mailer | null {
  if (config.smtpUrl === null) return null;
  const transport = nodemailer.createTransport(config.smtpUrl);
  return {
    async send({ to, subject, text }) {
      await transport.sendMail({ from: config.smtpFrom, to, subject, text });
    },
  };
}
