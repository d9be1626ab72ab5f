import type { SMTPServerDataStream } from 'smtp-server';

/**
 * The message of an smtp-server DATA stream, kept up to `maxBytes`: a larger one is read to its end
 * (the client is still sending) but not kept, and answers `undefined` (552 for the caller).
 */
export function readMessage(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    stream.on('end', () => resolve(stream.sizeExceeded || size > maxBytes ? undefined : Buffer.concat(chunks)));
  });
}
