// Check sign-up addresses before sending to them: offer the corrected address for a typo, refuse
// addresses that cannot receive mail, and list the addresses Pigeon no longer sends to.
//
//   PIGEON_URL=http://localhost:3000 PIGEON_SECRET_KEY=sk_… node examples/verify-signup.mjs ada@gmial.com grace@example.com
//
// Verification uses Pigeon's DNS resolver (DNS_SERVERS, else the system's): without DNS answers the
// DNS facts come back null and the address is not called invalid.
import { Pigeon } from '@pigeon/sdk';

const baseUrl = process.env.PIGEON_URL ?? 'http://localhost:3000';
const secretKey = process.env.PIGEON_SECRET_KEY;
if (!secretKey) {
  console.error('Set PIGEON_SECRET_KEY (see .pigeon/first-run.txt).');
  process.exit(2);
}
const pigeon = new Pigeon({ apiKey: secretKey, baseUrl });

for (const address of process.argv.slice(2)) {
  const result = await pigeon.verify(address);
  if (result.isTypo) console.log(`${address}: did you mean ${result.suggestedEmail}?`);
  else if (!result.valid) console.log(`${address}: refused (${result.reasons[0]})`);
  else if (result.isDisposable) console.log(`${address}: a disposable address, ask for another`);
  else console.log(`${address}: ok${result.domainExists === null ? ' (DNS did not answer: unchecked)' : ''}`);
}

let suppressed = 0;
for await (const s of pigeon.suppressions.all()) {
  suppressed++;
  console.log(`suppressed: ${s.email} (${s.reason}${s.detail ? `: ${s.detail}` : ''})`);
}
console.log(`${suppressed} suppressed address${suppressed === 1 ? '' : 'es'}`);
