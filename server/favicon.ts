// GET /favicon.ico: browsers ask for it on their own (any page of the service, the JSON included)
// and a 404 shows up as an error in their consoles. The icon is drawn here, a 32x32 ICO holding an
// uncompressed 32-bit bitmap (a green dot, the docs page's icon), so no binary file is kept.
import { createHash } from 'node:crypto';
import type express from 'express';

const SIZE = 32;

/** The ICO bytes: ICONDIR, one ICONDIRENTRY, BITMAPINFOHEADER, BGRA pixels bottom-up, AND mask. */
export function faviconIco(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  const c = (SIZE - 1) / 2;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const d = Math.hypot(x - c, y - c);
      const alpha = Math.round(255 * Math.min(1, Math.max(0, SIZE / 2 - 1 - d + 0.5)));
      const o = ((SIZE - 1 - y) * SIZE + x) * 4; // rows bottom-up
      pixels.set([0x32, 0x7d, 0x2e, alpha], o); // #2e7d32 as B, G, R, A
    }
  }
  const mask = Buffer.alloc(SIZE * (SIZE / 8)); // all 0: the alpha channel decides
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(SIZE, 4);
  header.writeInt32LE(SIZE * 2, 8); // XOR bitmap + AND mask
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  header.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([header, pixels, mask]);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2); // icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(SIZE, 6);
  dir.writeUInt8(SIZE, 7);
  dir.writeUInt16LE(1, 10); // planes
  dir.writeUInt16LE(32, 12); // bits per pixel
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
}

export function faviconHandler(): express.RequestHandler {
  const body = faviconIco();
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) {
      res.status(304).end();
      return;
    }
    res.type('image/x-icon');
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
