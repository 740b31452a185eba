/** A hostile HTTP server's ways of answering, for the SDKs' tests: endless bodies and trickles. */
import type { ServerResponse } from 'node:http';

/**
 * Writes `chunk` again and again, as fast as the client takes it, until the client hangs up;
 * resolves the bytes written then (or after `ms`, with what was written by then).
 */
export function endless(response: ServerResponse, chunk: string, ms = 8_000): Promise<number> {
  let written = 0;
  const pump = () => {
    while (!response.destroyed) {
      written += Buffer.byteLength(chunk);
      if (!response.write(chunk)) return void response.once('drain', pump);
    }
  };
  pump();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(written), ms);
    response.on('close', () => {
      clearTimeout(timer);
      resolve(written);
    });
  });
}

/** Writes `byte` every 50 ms until the client hangs up. */
export function trickle(response: ServerResponse, byte: string): void {
  const timer = setInterval(() => response.write(byte), 50);
  response.on('close', () => clearInterval(timer));
}
