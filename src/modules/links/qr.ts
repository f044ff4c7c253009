import { createHash } from 'node:crypto';
import { PNG } from 'pngjs';
import { encode, renderSVG, type QrCodeGenerateOptions } from 'uqr';

/**
 * A link's QR code, as SVG (a page, a print) or PNG (a chat app, a printer's software). Both draw
 * the same matrix: a quiet zone of 4 modules, as the QR standard asks, and error correction M,
 * so a poster's code still reads with a crease or a stain on it.
 */
const OPTIONS: QrCodeGenerateOptions = { border: 4, ecc: 'M' };
/** Pixels per module of the PNG: a 33-module code is 330 px wide, plenty for a phone and for print. */
const PNG_MODULE_PX = 10;
const BLACK = 0;
const WHITE = 255;

export type QrFormat = 'svg' | 'png';

export const QR_CONTENT_TYPES: Readonly<Record<QrFormat, string>> = {
  svg: 'image/svg+xml; charset=utf-8',
  png: 'image/png',
};

/** The modules of `text`'s QR code, quiet zone included: `true` is black. */
export function qrMatrix(text: string): boolean[][] {
  return encode(text, OPTIONS).data;
}

function pngOf(matrix: boolean[][]): Buffer {
  const width = matrix.length * PNG_MODULE_PX;
  const png = new PNG({ width, height: width, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  // One grey byte per pixel, written as an 8-bit greyscale PNG.
  const pixels = Buffer.alloc(width * width, WHITE);
  matrix.forEach((row, y) =>
    row.forEach((black, x) => {
      if (!black) return;
      for (let dy = 0; dy < PNG_MODULE_PX; dy++) {
        const start = (y * PNG_MODULE_PX + dy) * width + x * PNG_MODULE_PX;
        pixels.fill(BLACK, start, start + PNG_MODULE_PX);
      }
    }),
  );
  png.data = pixels;
  return PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
}

/** `text`'s QR code in `format`, with the ETag of that image (it changes only with the text). */
export function qrImage(text: string, format: QrFormat): { body: string | Buffer; etag: string } {
  const body = format === 'svg' ? renderSVG(text, OPTIONS) : pngOf(qrMatrix(text));
  const etag = `"${createHash('sha256').update(format).update('\n').update(text).digest('hex').slice(0, 16)}"`;
  return { body, etag };
}
