/**
 * The parts of the GGUF v3 format that our generated models share: a little-endian byte writer,
 * typed metadata values, and the header/tensor-info layout. The tiny test model writes everything
 * in memory; the shaped benchmark models stream their tensor data to disk after this header.
 */

/** GGUF metadata value types. */
const valueType = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

export const ggufAlignment = 32;

export type MetadataValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'stringArray'; value: string[] }
  | { type: 'i32Array'; value: number[] };

/** One tensor's entry in the header: dimensions innermost first, as GGUF stores them. */
export interface TensorInfo {
  name: string;
  dimensions: number[];
  /** ggml type id (F32 = 0, Q4_0 = 2, Q8_0 = 8, …). */
  ggmlType: number;
  /** Bytes of data, before alignment padding. */
  byteLength: number;
}

/** Little-endian byte writer that grows as needed. */
export class ByteWriter {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + extra) size *= 2;
    const grown = Buffer.alloc(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  u32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }

  i32(value: number): void {
    this.ensure(4);
    this.buffer.writeInt32LE(value, this.length);
    this.length += 4;
  }

  u64(value: number): void {
    this.ensure(8);
    this.buffer.writeBigUInt64LE(BigInt(value), this.length);
    this.length += 8;
  }

  f32(value: number): void {
    this.ensure(4);
    this.buffer.writeFloatLE(value, this.length);
    this.length += 4;
  }

  u8(value: number): void {
    this.ensure(1);
    this.buffer.writeUInt8(value, this.length);
    this.length += 1;
  }

  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.bytes(bytes);
  }

  bytes(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  padTo(boundary: number): void {
    const padding = (boundary - (this.length % boundary)) % boundary;
    this.ensure(padding);
    this.buffer.fill(0, this.length, this.length + padding);
    this.length += padding;
  }

  result(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function writeMetadataValue(writer: ByteWriter, value: MetadataValue): void {
  switch (value.type) {
    case 'u32':
      writer.u32(valueType.u32);
      writer.u32(value.value);
      return;
    case 'f32':
      writer.u32(valueType.f32);
      writer.f32(value.value);
      return;
    case 'bool':
      writer.u32(valueType.bool);
      writer.u8(value.value ? 1 : 0);
      return;
    case 'string':
      writer.u32(valueType.string);
      writer.string(value.value);
      return;
    case 'stringArray':
      writer.u32(valueType.array);
      writer.u32(valueType.string);
      writer.u64(value.value.length);
      for (const entry of value.value) writer.string(entry);
      return;
    case 'i32Array':
      writer.u32(valueType.array);
      writer.u32(valueType.i32);
      writer.u64(value.value.length);
      for (const entry of value.value) writer.i32(entry);
      return;
  }
}

export function paddedLength(byteLength: number): number {
  return byteLength + ((ggufAlignment - (byteLength % ggufAlignment)) % ggufAlignment);
}

/**
 * Writes the magic, the metadata and the tensor infos, padded so the tensor data can follow.
 * Tensor data must then be written in the same order, each padded to the alignment.
 */
export function writeGgufHeader(writer: ByteWriter, metadata: Array<[string, MetadataValue]>, tensors: TensorInfo[]): void {
  writer.bytes(Buffer.from('GGUF', 'ascii'));
  writer.u32(3);
  writer.u64(tensors.length);
  writer.u64(metadata.length);
  for (const [key, value] of metadata) {
    writer.string(key);
    writeMetadataValue(writer, value);
  }
  // Each tensor's offset is the running sum of the padded sizes before it.
  let offset = 0;
  for (const tensor of tensors) {
    writer.string(tensor.name);
    writer.u32(tensor.dimensions.length);
    for (const dimension of tensor.dimensions) writer.u64(dimension);
    writer.u32(tensor.ggmlType);
    writer.u64(offset);
    offset += paddedLength(tensor.byteLength);
  }
  writer.padTo(ggufAlignment);
}

/** GPT-2's byte-to-unicode table: every byte gets a printable character so BPE never sees raw bytes. */
export function gpt2ByteToUnicode(): string[] {
  const printable: number[] = [];
  for (let code = 0x21; code <= 0x7e; code += 1) printable.push(code);
  for (let code = 0xa1; code <= 0xac; code += 1) printable.push(code);
  for (let code = 0xae; code <= 0xff; code += 1) printable.push(code);
  const table: string[] = new Array(256);
  for (const code of printable) table[code] = String.fromCodePoint(code);
  let extra = 0;
  for (let byte = 0; byte < 256; byte += 1) {
    if (table[byte] === undefined) {
      table[byte] = String.fromCodePoint(256 + extra);
      extra += 1;
    }
  }
  return table;
}

/** ChatML, the template node-llama-cpp recognises and maps to its ChatML wrapper. */
export const chatMlTemplate =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
