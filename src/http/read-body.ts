import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ApiError } from '../errors';
import { payloadTooLarge } from '../refusals';

const DECODERS: Record<string, typeof gunzipSync> = { gzip: gunzipSync, deflate: inflateSync, br: brotliDecompressSync };

/**
 * The request body, at most `limit` bytes once decoded (413 past it, refused by Content-Length
 * before anything is read, and the reading stopped). A gzip, deflate or br body is decoded; any
 * other encoding is 415.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const decode = encoding === 'identity' ? undefined : DECODERS[encoding];
  if (encoding !== 'identity' && !decode) {
    return Promise.reject(new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${JSON.stringify(encoding.slice(0, 20))} is not supported`));
  }
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= limit) return void chunks.push(chunk);
      req.pause();
      finish(payloadTooLarge(limit));
    };
    const onEnd = () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
      if (!decode) return finish(undefined, body);
      try {
        finish(undefined, decode(body, { maxOutputLength: limit }));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        finish(code === 'ERR_BUFFER_TOO_LARGE' ? payloadTooLarge(limit) : new ApiError('BAD_REQUEST', `The request body is not valid ${encoding}`));
      }
    };
    const onError = () => finish(new ApiError('BAD_REQUEST', 'The request body did not arrive whole'));
    const finish = (error: ApiError | undefined, body?: Buffer) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
      if (error) reject(error);
      else resolve(body as Buffer);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}

const PARSE_FAILED = 'The request body is not valid JSON';

/**
 * A JSON body as body-parser's strict mode reads it: an object or an array; an empty body is `{}`.
 * The bytes are decoded as UTF-8, an invalid sequence becoming U+FFFD.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  const text = body.toString('utf8');
  const first = /^[ \t\n\r]*(.)/.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw new ApiError('BAD_REQUEST', PARSE_FAILED);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError('BAD_REQUEST', PARSE_FAILED);
  }
}
