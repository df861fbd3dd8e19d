import assert from 'node:assert/strict';
import { scrubCredentials, withoutCredentials } from '../../src/common/url-credentials';

describe('credentials in URLs', () => {
  it('takes the user and password out of a URL and leaves the rest as written', () => {
    assert.equal(withoutCredentials('https://x-access-token:ghs_s3cret@github.com/acme/defs.git'), 'https://github.com/acme/defs.git');
    assert.equal(withoutCredentials('https://glpat-s3cret@gitlab.example.com:8443/acme/defs.git'), 'https://gitlab.example.com:8443/acme/defs.git');
    assert.equal(withoutCredentials('https://user:p%40ss@127.0.0.1:4443/a@b/defs.git'), 'https://127.0.0.1:4443/a@b/defs.git', 'an @ in the path is not the credentials\' end');
    assert.equal(withoutCredentials('ssh://git@github.com/acme/defs.git'), 'ssh://github.com/acme/defs.git');
    assert.equal(withoutCredentials('https://github.com/acme/defs.git'), 'https://github.com/acme/defs.git');
    assert.equal(withoutCredentials('file:///srv/defs.git'), 'file:///srv/defs.git');
    assert.equal(withoutCredentials('/srv/defs'), '/srv/defs');
  });

  it('scrubs every URL in a message, Git\'s quotes and command lines included', () => {
    assert.equal(scrubCredentials('fatal: Authentication failed for \'https://x-access-token:ghs_s3cret@127.0.0.1:4443/private.git/\''),
      'fatal: Authentication failed for \'https://127.0.0.1:4443/private.git/\'');
    assert.equal(scrubCredentials('Command failed: git clone --quiet https://u:t0k@h/a.git /tmp/x and ssh://git@h/b.git'),
      'Command failed: git clone --quiet https://h/a.git /tmp/x and ssh://h/b.git');
    assert.equal(scrubCredentials('no URL here: user@example.com'), 'no URL here: user@example.com');
  });
});
