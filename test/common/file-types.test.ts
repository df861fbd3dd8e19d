import assert from 'node:assert/strict';
import { mimeTypeOfName } from '../../src/common/file-types';

describe('mimeTypeOfName', () => {
  it('takes the type of a known text extension, in any case, and keeps the fallback otherwise', () => {
    const fallback = 'text/plain; charset=utf-8';
    assert.equal(mimeTypeOfName('echo.json', fallback), 'application/json');
    assert.equal(mimeTypeOfName('REPORT.CSV', fallback), 'text/csv; charset=utf-8');
    assert.equal(mimeTypeOfName('notes.md', 'application/json'), 'text/markdown; charset=utf-8');
    for (const name of ['archive.zip', 'README', '.json', 'trailing.', 'x.constructor', 'x.__proto__', 'x.toString']) {
      assert.equal(mimeTypeOfName(name, fallback), fallback, name);
    }
  });
});
