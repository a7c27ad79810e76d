/**
 * Writes small PNGs with known content (for image-rubric tests): RGB, 8 bits, no filter,
 * zlib-compressed as the PNG specification requires. The pixels are computed by code, so
 * a test knows exactly what each image shows.
 */
import { deflateSync } from 'node:zlib';

const crcTable = Array.from({ length: 256 }, (_, index) => {
  let value = index;
  for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

export type Rgb = readonly [number, number, number];

/** A PNG whose pixel (x, y) has the colour `pixel(x, y)`. */
export function encodePng(width: number, height: number, pixel: (x: number, y: number) => Rgb): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const offset = y * (width * 3 + 1);
    rows[offset] = 0; // filter: none
    for (let x = 0; x < width; x += 1) {
      const [red, green, blue] = pixel(x, y);
      rows[offset + 1 + x * 3] = red;
      rows[offset + 2 + x * 3] = green;
      rows[offset + 3 + x * 3] = blue;
    }
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

export const solidPng = (width: number, height: number, colour: Rgb) => encodePng(width, height, () => colour);

/** Vertical stripes of the given colours, equal widths. */
export const stripesPng = (width: number, height: number, colours: readonly Rgb[]) => encodePng(width, height, (x) => colours[Math.floor((x * colours.length) / width)]);
