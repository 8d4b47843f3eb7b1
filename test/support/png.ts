/** Real PNG files made in the test process: a solid colour of any size, valid to any decoder. */
import { deflateSync } from "node:zlib";

function chunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(Bun.hash.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A `width` x `height` RGB PNG of one colour. */
export function solidPng(
  width: number,
  height: number,
  rgb: [number, number, number] = [29, 78, 216],
): Uint8Array<ArrayBuffer> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).map((_, i) => rgb[i % 3]!)]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", header),
      chunk("IDAT", pixels),
      chunk("IEND", new Uint8Array(0)),
    ]),
  );
}

/** `png` with its IHDR byte at `offset` (8: bit depth, 12: interlace) set to `value`, its CRC made right again. */
export function withHeaderByte(png: Uint8Array<ArrayBuffer>, offset: number, value: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(png);
  out[16 + offset] = value;
  new DataView(out.buffer).setUint32(29, Bun.hash.crc32(out.subarray(12, 29)));
  return out;
}

/** `png` with one of its pixel rows given an unknown filter: the header reads fine, the pixels do not. */
export function withBadFilter(width: number, height: number): Uint8Array<ArrayBuffer> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc((1 + width * 3) * height);
  rows[(1 + width * 3) * 2] = 29;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", header),
      chunk("IDAT", deflateSync(rows)),
      chunk("IEND", new Uint8Array(0)),
    ]),
  );
}
