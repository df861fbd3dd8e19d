import assert from 'node:assert/strict';
import { cleanContentType, keySegment, refusedByContent, refusedByName, sanitizeFilename } from '../../src/attachments/file-policy';
import { assertSafeKey } from '../../src/blobs/blob-store';

describe('file policy', () => {
  describe('sanitizeFilename', () => {
    it('keeps the last path component only, whichever the slash', () => {
      assert.equal(sanitizeFilename('../../etc/passwd'), 'passwd');
      assert.equal(sanitizeFilename('C:\\Users\\x\\report.pdf'), 'report.pdf');
      assert.equal(sanitizeFilename('dir/'), 'file');
    });

    it('replaces special and control characters, drops leading dots, and never answers empty', () => {
      assert.equal(sanitizeFilename('a\u0000b\r\nc<>:"|?*.txt'), 'a_b_c_.txt');
      assert.equal(sanitizeFilename('.bashrc'), 'bashrc');
      assert.equal(sanitizeFilename('..'), 'file');
      assert.equal(sanitizeFilename(''), 'file');
      assert.equal(sanitizeFilename(undefined), 'file');
      assert.equal(sanitizeFilename('Résumé  final.pdf'), 'Résumé final.pdf');
    });

    it('shortens long names to 200 characters, keeping the extension', () => {
      const name = sanitizeFilename(`${'n'.repeat(500)}.xlsx`);
      assert.equal(name.length, 200);
      assert.ok(name.endsWith('.xlsx'));
    });

    it('gives a blob-key segment the store accepts for any name', () => {
      for (const raw of ['../../etc/passwd', 'Résumé 2024.pdf', '.', '...', '日本語.txt', 'a'.repeat(400), '-x']) {
        assert.doesNotThrow(() => assertSafeKey(`attachments/org/id/${keySegment(sanitizeFilename(raw))}`), raw);
      }
    });
  });

  it('cleans content types to type/subtype and falls back to application/octet-stream', () => {
    assert.equal(cleanContentType('Image/PNG; charset=x'), 'image/png');
    assert.equal(cleanContentType('text/html\r\nX-Injected: 1'), 'application/octet-stream');
    assert.equal(cleanContentType(''), 'application/octet-stream');
  });

  it('refuses executables and scripts by name and by declared type', () => {
    for (const name of ['setup.exe', 'RUN.BAT', 'x.ps1', 'deploy.sh', 'a.pdf.vbs', 'lib.so', 'tool.py', 'app.jar']) {
      assert.ok(refusedByName(name, 'application/octet-stream'), name);
    }
    for (const name of ['photo.jpg', 'report.pdf', 'data.bin', 'notes.txt', 'archive.zip', 'noextension']) {
      assert.equal(refusedByName(name, 'application/octet-stream'), undefined, name);
    }
    assert.ok(refusedByName('harmless.txt', 'application/x-msdownload'));
  });

  it('refuses ELF, PE, Mach-O and #! content, and nothing else', () => {
    const refused = [[0x7f, 0x45, 0x4c, 0x46], [0x4d, 0x5a, 0x90], [0xfe, 0xed, 0xfa, 0xce], [0xfe, 0xed, 0xfa, 0xcf], [0xce, 0xfa, 0xed, 0xfe],
      [0xcf, 0xfa, 0xed, 0xfe], [0xca, 0xfe, 0xba, 0xbe], [0x23, 0x21, 0x2f], [0xef, 0xbb, 0xbf, 0x23, 0x21]];
    for (const bytes of refused) assert.ok(refusedByContent(Buffer.from(bytes)), Buffer.from(bytes).toString('hex'));
    for (const text of ['%PDF-1.7', '\x89PNG', 'hello', '#comment', 'M', '']) assert.equal(refusedByContent(Buffer.from(text)), undefined, text);
  });
});
