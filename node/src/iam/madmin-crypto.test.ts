import { describe, expect, it } from 'vitest';
import { codeOf } from '../../test/helpers/error-code.ts';
import { ARGON2ID_CHACHA20_POLY1305, decryptData, encryptData, PBKDF2_AES_GCM, sioDecrypt, sioEncrypt } from './madmin-crypto.ts';

// Published test vectors of the sio stream format (secure-io/sio-go test_vectors.json): algorithm, buffer size, key, nonce, additional data, plaintext, ciphertext.
const VECTORS: [number, string, string, string, string, string][] = [
  [16, '00000000000000000000000000000000', '0000000000000000', '', '', 'e0247a864e783cecb1f7996c13cd3f64'],
  [16, '10000000000000000000000000000000', '1000000000000000', '00', '00', '61ed193d12a2adf6f1c41f31de4ead6c5c'],
  [16, '10000000000000000000000000000000', '0000000000000002', '', '0000000000000000000000000000000000', '691deb7b9ccbee91f48d12c7ad5fe3cd4e1e5e7d394f06b91228ec9a5dd2456ac7de9502a0b4010fb1ee1db94e940458fb'],
  [
    16,
    '20000000000000000000000000000000',
    '2000000000000000',
    '00',
    '0000000000000000000000000000000000000000000000000000000000000000',
    'f58d8fef7ac7782a4361a79c07f5e6c4672d8a45e6cb9ef67cb7177897358deb8d338d313d44f78e0b68a3723d7ca0fe5f62aa8af0a72e508f5d5f8491ecedb2',
  ],
  [
    17,
    '31dd758d120fd5d30063921a21f723be',
    'd3794fe387018e32',
    '1d838b6e861ea7576de110e08818de82a27337a99db7b95aa95c3347971ad4cfa0ef0960d6645f5a64f88c7d',
    'd0ae0d85e93ed6be853ded2031643116a03215b4fda224d2986d7233039aa47e91b686f4',
    'a6fe911b94e0b25a25bf6da71f28ad6a6b6920be01589e9194226f77c164606545d5cbdb76c99415b468c54517f5a8bc8dc8ac13b1b4285fe36f37f7884d5e4bfb32ecef56b4026bf02bfb1d4fce222e01ef9db9',
  ],
];

describe('madmin body encryption', () => {
  it('the sio stream matches its published vectors (one fragment, several, an exact multiple, additional data)', () => {
    for (const [buf, key, nonce, ad, plain, cipher] of VECTORS) {
      const h = (x: string) => Buffer.from(x, 'hex');
      expect(sioEncrypt('aes-128-gcm', h(key), h(nonce), h(plain), buf, h(ad)).toString('hex')).toBe(cipher);
      expect(sioDecrypt('aes-128-gcm', h(key), h(nonce), h(cipher), buf, h(ad)).toString('hex')).toBe(plain);
    }
  });

  it('round-trips every algorithm id over sizes around the 16 KiB fragment, and refuses a wrong key or a flipped bit', async () => {
    for (const size of [0, 1, 16384, 16385, 40000]) {
      const data = Buffer.alloc(size, 7);
      const enc = await encryptData('secret-key-1', data);
      expect(enc.length).toBe(41 + size + 16 * Math.max(1, Math.ceil(size / 16384)));
      expect((await decryptData('secret-key-1', enc)).equals(data)).toBe(true);
    }
    for (const id of [ARGON2ID_CHACHA20_POLY1305, PBKDF2_AES_GCM]) {
      const enc = await encryptData('pw', Buffer.from('{"secretKey":"x"}'), id);
      expect(enc[32]).toBe(id);
      expect((await decryptData('pw', enc)).toString()).toBe('{"secretKey":"x"}');
    }
    const enc = await encryptData('right', Buffer.from('hello'));
    expect(await codeOf(decryptData('wrong', enc))).toBe('XSvcAdminConfigBadJson');
    enc[enc.length - 1]! ^= 1;
    expect(await codeOf(decryptData('right', enc))).toBe('XSvcAdminConfigBadJson');
    expect(await codeOf(decryptData('right', Buffer.from('{"plain":"json"}')))).toBe('XSvcAdminConfigBadJson');
  });
});
