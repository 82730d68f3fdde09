/** What the first bytes of a file say it is. */
export interface FileKind {
  /** `text`, an `image` the model can see, or another `binary` format. */
  type: 'text' | 'image' | 'binary';
  /** A short name of the format, e.g. `PNG image`, `PDF document`. */
  format?: string;
  /** MIME type when known. */
  mimeType?: string;
}

interface Signature {
  offset: number;
  bytes: readonly number[];
  kind: FileKind;
  /** Short signatures that plain text could start with also need a NUL byte this early. */
  nulWithin?: number;
}

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

const signatures: readonly Signature[] = [
  {
    offset: 0,
    bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    kind: { type: 'image', format: 'PNG image', mimeType: 'image/png' },
  },
  {
    offset: 0,
    bytes: [0xff, 0xd8, 0xff],
    kind: { type: 'image', format: 'JPEG image', mimeType: 'image/jpeg' },
  },
  {
    offset: 0,
    bytes: ascii('GIF87a'),
    kind: { type: 'image', format: 'GIF image', mimeType: 'image/gif' },
  },
  {
    offset: 0,
    bytes: ascii('GIF89a'),
    kind: { type: 'image', format: 'GIF image', mimeType: 'image/gif' },
  },
  {
    offset: 8,
    bytes: ascii('WEBP'),
    kind: { type: 'image', format: 'WebP image', mimeType: 'image/webp' },
  },
  {
    offset: 0,
    bytes: ascii('BM'),
    kind: { type: 'binary', format: 'BMP image', mimeType: 'image/bmp' },
    nulWithin: 64,
  },
  {
    offset: 0,
    bytes: [0x00, 0x00, 0x01, 0x00],
    kind: { type: 'binary', format: 'ICO image', mimeType: 'image/x-icon' },
  },
  {
    offset: 0,
    bytes: ascii('II*\0'),
    kind: { type: 'binary', format: 'TIFF image', mimeType: 'image/tiff' },
  },
  {
    offset: 0,
    bytes: ascii('MM\0*'),
    kind: { type: 'binary', format: 'TIFF image', mimeType: 'image/tiff' },
  },
  {
    offset: 0,
    bytes: ascii('%PDF-'),
    kind: { type: 'binary', format: 'PDF document', mimeType: 'application/pdf' },
  },
  {
    offset: 0,
    bytes: [0x50, 0x4b, 0x03, 0x04],
    kind: {
      type: 'binary',
      format: 'ZIP archive (or a format built on it: jar, docx, xlsx…)',
      mimeType: 'application/zip',
    },
  },
  {
    offset: 0,
    bytes: [0x50, 0x4b, 0x05, 0x06],
    kind: { type: 'binary', format: 'ZIP archive (empty)', mimeType: 'application/zip' },
  },
  {
    offset: 0,
    bytes: [0x1f, 0x8b],
    kind: { type: 'binary', format: 'gzip data', mimeType: 'application/gzip' },
  },
  {
    offset: 0,
    bytes: ascii('BZh'),
    kind: { type: 'binary', format: 'bzip2 data', mimeType: 'application/x-bzip2' },
    nulWithin: 64,
  },
  {
    offset: 0,
    bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
    kind: { type: 'binary', format: 'xz data', mimeType: 'application/x-xz' },
  },
  {
    offset: 0,
    bytes: [0x28, 0xb5, 0x2f, 0xfd],
    kind: { type: 'binary', format: 'zstd data', mimeType: 'application/zstd' },
  },
  {
    offset: 0,
    bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c],
    kind: { type: 'binary', format: '7-Zip archive', mimeType: 'application/x-7z-compressed' },
  },
  {
    offset: 0,
    bytes: ascii('Rar!'),
    kind: { type: 'binary', format: 'RAR archive', mimeType: 'application/vnd.rar' },
  },
  {
    offset: 257,
    bytes: ascii('ustar'),
    kind: { type: 'binary', format: 'tar archive', mimeType: 'application/x-tar' },
  },
  {
    offset: 0,
    bytes: [0x7f, 0x45, 0x4c, 0x46],
    kind: { type: 'binary', format: 'ELF executable', mimeType: 'application/x-elf' },
  },
  {
    offset: 0,
    bytes: [0xcf, 0xfa, 0xed, 0xfe],
    kind: { type: 'binary', format: 'Mach-O executable', mimeType: 'application/x-mach-binary' },
  },
  {
    offset: 0,
    bytes: ascii('MZ'),
    kind: {
      type: 'binary',
      format: 'DOS/Windows executable',
      mimeType: 'application/vnd.microsoft.portable-executable',
    },
    nulWithin: 64,
  },
  {
    offset: 0,
    bytes: [0x00, 0x61, 0x73, 0x6d],
    kind: { type: 'binary', format: 'WebAssembly module', mimeType: 'application/wasm' },
  },
  {
    offset: 0,
    bytes: ascii('SQLite format 3\0'),
    kind: { type: 'binary', format: 'SQLite database', mimeType: 'application/vnd.sqlite3' },
  },
  {
    offset: 0,
    bytes: ascii('OggS'),
    kind: { type: 'binary', format: 'Ogg media', mimeType: 'audio/ogg' },
  },
  {
    offset: 0,
    bytes: ascii('ID3'),
    kind: { type: 'binary', format: 'MP3 audio', mimeType: 'audio/mpeg' },
    nulWithin: 64,
  },
  {
    offset: 0,
    bytes: ascii('fLaC'),
    kind: { type: 'binary', format: 'FLAC audio', mimeType: 'audio/flac' },
  },
  {
    offset: 4,
    bytes: ascii('ftyp'),
    kind: { type: 'binary', format: 'MP4/QuickTime media', mimeType: 'video/mp4' },
  },
  {
    offset: 0,
    bytes: [0x1a, 0x45, 0xdf, 0xa3],
    kind: { type: 'binary', format: 'Matroska/WebM media', mimeType: 'video/webm' },
  },
  {
    offset: 0,
    bytes: ascii('wOFF'),
    kind: { type: 'binary', format: 'WOFF font', mimeType: 'font/woff' },
  },
  {
    offset: 0,
    bytes: ascii('wOF2'),
    kind: { type: 'binary', format: 'WOFF2 font', mimeType: 'font/woff2' },
  },
  {
    offset: 0,
    bytes: [0xca, 0xfe, 0xba, 0xbe],
    kind: { type: 'binary', format: 'Java class or Mach-O universal binary' },
  },
  {
    offset: 0,
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    kind: { type: 'binary', format: 'Microsoft Office (OLE2) document' },
  },
];

function matchesAt(sample: Uint8Array, signature: Signature): boolean {
  if (sample.length < signature.offset + signature.bytes.length) return false;
  if (!signature.bytes.every((byte, index) => sample[signature.offset + index] === byte))
    return false;
  if (signature.nulWithin === undefined) return true;
  return sample.subarray(0, signature.nulWithin).includes(0);
}

/**
 * Classifies a file from its first bytes (8 KiB is plenty): magic numbers first (so a PDF or
 * ZIP is binary even without NUL bytes), then a NUL byte, then a high share of control bytes.
 * `RIFF…WEBP` needs both parts, so a plain `RIFF` WAV is not taken for an image.
 */
export function detectFileKind(sample: Uint8Array): FileKind {
  for (const signature of signatures) {
    if (
      signature.kind.format === 'WebP image' &&
      !matchesAt(sample, { offset: 0, bytes: ascii('RIFF'), kind: signature.kind })
    )
      continue;
    if (matchesAt(sample, signature)) return signature.kind;
  }
  if (
    sample.length >= 4 &&
    sample[0] === 0x52 &&
    sample[1] === 0x49 &&
    sample[2] === 0x46 &&
    sample[3] === 0x46
  )
    return { type: 'binary', format: 'RIFF media (WAV/AVI)' };
  if (sample.includes(0)) return { type: 'binary', format: 'binary data (contains NUL bytes)' };
  let control = 0;
  for (const byte of sample) {
    if (
      byte < 0x20 &&
      byte !== 0x09 &&
      byte !== 0x0a &&
      byte !== 0x0d &&
      byte !== 0x0c &&
      byte !== 0x1b &&
      byte !== 0x08
    )
      control++;
  }
  if (sample.length > 0 && control / sample.length > 0.1)
    return { type: 'binary', format: 'binary data (many control bytes)' };
  return { type: 'text' };
}
