/**
 * What an uploaded file may be called and contain (interface.md 2.2 and 8): names are sanitized,
 * and executables and scripts are refused by name, by declared type and by their first bytes,
 * whatever they claim to be.
 */

/** Enough leading bytes to recognize every signature below (a UTF-8 BOM before `#!` is the longest). */
export const SNIFF_BYTES = 5;

const MAX_NAME_LENGTH = 200;

/** Extensions of programs and scripts that run on double-click or through a common interpreter. */
const REFUSED_EXTENSIONS = new Set([
  // Windows executables, installers, shortcuts and scripts
  'exe', 'dll', 'com', 'scr', 'pif', 'cpl', 'sys', 'drv', 'ocx', 'msi', 'msp', 'mst', 'msc', 'lnk', 'reg', 'inf', 'gadget',
  'bat', 'cmd', 'ps1', 'psm1', 'psd1', 'ps1xml', 'vb', 'vbs', 'vbe', 'js', 'jse', 'wsf', 'wsh', 'ws', 'wsc', 'hta', 'scf',
  // Unix and macOS executables and shell scripts
  'sh', 'bash', 'zsh', 'ksh', 'csh', 'tcsh', 'fish', 'run', 'elf', 'so', 'dylib', 'app', 'command',
  'appimage', 'scpt', 'applescript', 'pkg', 'deb', 'rpm', 'apk',
  // interpreted languages
  'py', 'pyc', 'pyo', 'pyw', 'pl', 'pm', 'rb', 'php', 'phtml', 'php3', 'php4', 'php5', 'phar', 'lua', 'tcl', 'mjs', 'cjs',
  'jar', 'class', 'awk',
]);

/** Declared types that name a program; refusing them is cheap, the byte check is what counts. */
const REFUSED_TYPES = new Set([
  'application/x-msdownload', 'application/x-msdos-program', 'application/x-ms-installer', 'application/x-msi',
  'application/x-executable', 'application/x-elf', 'application/x-sharedlib', 'application/x-mach-binary',
  'application/x-dosexec', 'application/vnd.microsoft.portable-executable', 'application/x-sh', 'application/x-csh',
  'text/x-shellscript', 'text/x-sh', 'application/x-shellscript', 'application/x-bat', 'application/x-httpd-php',
  'text/x-python', 'text/x-perl', 'application/x-perl', 'text/x-ruby', 'application/x-ruby', 'application/java-archive',
  'application/javascript', 'text/javascript', 'application/x-javascript', 'application/x-powershell', 'text/vbscript',
]);

const SIGNATURES: { kind: string; bytes: number[] }[] = [
  { kind: 'an ELF executable', bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { kind: 'a Mach-O executable', bytes: [0xfe, 0xed, 0xfa, 0xce] },
  { kind: 'a Mach-O executable', bytes: [0xfe, 0xed, 0xfa, 0xcf] },
  { kind: 'a Mach-O executable', bytes: [0xce, 0xfa, 0xed, 0xfe] },
  { kind: 'a Mach-O executable', bytes: [0xcf, 0xfa, 0xed, 0xfe] },
  { kind: 'a Mach-O universal binary', bytes: [0xca, 0xfe, 0xba, 0xbe] },
  { kind: 'a Windows (PE/MZ) executable', bytes: [0x4d, 0x5a] },
  { kind: 'a script (#!)', bytes: [0x23, 0x21] },
  { kind: 'a script (#!)', bytes: [0xef, 0xbb, 0xbf, 0x23, 0x21] },
];

/**
 * The sanitized name of an upload: the last path component only (either slash), NFC, control and
 * special characters replaced by `_`, no leading dots (no hidden files, no `..`), at most 200
 * characters with the extension kept. Letters and digits of any script survive.
 */
export function sanitizeFilename(raw: string | undefined): string {
  const base = (raw ?? '').split(/[/\\]/).pop() ?? '';
  let name = base.normalize('NFC')
    .replace(/[^\p{L}\p{N}._ -]/gu, '_')
    .replace(/ {2,}/g, ' ')
    .replace(/_{2,}/g, '_')
    .trim()
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if ([...name].length > MAX_NAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = [...name.slice(0, name.length - ext.length)].slice(0, MAX_NAME_LENGTH - ext.length).join('') + ext;
  }
  return name || 'file';
}

/** A name that is safe as one blob-key segment (ASCII letters, digits, `.`, `_`, `-`; no leading dot). */
export function keySegment(filename: string): string {
  const ascii = filename.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._]+/, '').slice(-100);
  return ascii.replace(/^[._]+/, '') || 'file';
}

/** A MIME type fit to hand back: `type/subtype`, lowercased, parameters dropped; else octet-stream. */
export function cleanContentType(raw: string | undefined): string {
  const type = (raw ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,127}$/.test(type) ? type : 'application/octet-stream';
}

/** Why a file is refused by its name or declared type, or undefined when neither refuses it. */
export function refusedByName(filename: string, contentType: string): string | undefined {
  const extensions = filename.toLowerCase().split('.').slice(1);
  const last = extensions[extensions.length - 1];
  if (last !== undefined && REFUSED_EXTENSIONS.has(last)) return `its name ends in .${last}, an executable or script type`;
  if (REFUSED_TYPES.has(contentType)) return `its declared type ${contentType} is an executable or script`;
  return undefined;
}

/** What the first bytes say the file is, when that is an executable or a script. */
export function refusedByContent(head: Buffer): string | undefined {
  for (const { kind, bytes } of SIGNATURES) {
    if (head.length >= bytes.length && bytes.every((b, i) => head[i] === b)) return `its content is ${kind}`;
  }
  return undefined;
}
