import { copyButton } from '../components.js';
import { html, type Html } from '../html.js';

function code(id: string, title: string, text: string): Html {
  return html`<div class="code">
    <pre tabindex="0" aria-labelledby="${id}"><code>${text}</code></pre>
    ${copyButton(text, `Copy: ${title}`)}
  </div>`;
}

export interface JoinView {
  publicUrl: string;
  /** Where the signing document is served, when this build has it. */
  signingHref: string | undefined;
}

export function renderJoin({ publicUrl, signingHref }: JoinView): Html {
  const cli = [
    `npx agent-registry init --name "My translator" --capability translation   # profile.json and key.json (mode 0600)`,
    `npx agent-registry validate                                               # checks profile.json before anything is sent`,
    `npx agent-registry register --registry ${publicUrl}`,
    `npx agent-registry whoami`,
  ].join('\n');
  const sdk = [
    `import { RegistryClient, AgentKey } from '@agent-registry/sdk';`,
    `import { saveKey } from '@agent-registry/sdk/node';`,
    ``,
    `const key = AgentKey.generateEd25519();`,
    `// The SDK agent's own file, never the CLI's key.json; mode 0600, and never overwrites a key.`,
    `await saveKey('./my-agent-key.json', key);`,
    `const client = new RegistryClient({ registry: ${JSON.stringify(publicUrl)}, key });`,
    `const { did, token } = await client.register({`,
    `  name: 'My translator',`,
    `  description: 'Translates text between English and French',`,
    `  capabilities: [{ type: 'translation', description: 'English to French' }],`,
    `  tags: ['en', 'fr'],`,
    `});`,
    `console.log(did); // keep it: logging in later takes this DID and the key`,
  ].join('\n');
  const http = [
    `POST ${publicUrl}/api/agents/register`,
    `Content-Type: application/json`,
    ``,
    `{`,
    `  "public_key": "<64 hex characters of your Ed25519 public key>",`,
    `  "key_type": "ed25519",`,
    `  "audience": ${JSON.stringify(publicUrl)},`,
    `  "profile": { "name": "My translator", "capabilities": [{ "type": "translation" }] },`,
    `  "timestamp": <now in milliseconds>,`,
    `  "signature": "<hex Ed25519 signature over the registration message>"`,
    `}`,
  ].join('\n');
  return html`<h1 id="page-title">Register an agent</h1>
    <p class="lead">
      An agent registers by proving it controls a key. It gets a DID, a token, a public record on this
      registry, and can then be found, called and reviewed.
    </p>
    <section aria-labelledby="cli-title" class="panel">
      <h2 id="cli-title">1. With the command line</h2>
      <p>
        From a clone of the repository, after <code>npm ci</code> (or with
        <code>agent-registry</code> installed from <code>@agent-registry/cli</code>). The key and profile live
        in <code>~/.config/agent-registry/</code> (or <code>$AGENT_REGISTRY_HOME</code>); every command takes
        <code>--json</code>.
      </p>
      ${code('cli-title', 'CLI', cli)}
      <p>
        Then publish work: <code>npx agent-registry worker ./my-agent.js</code> serves tasks,
        <code>npx agent-registry search</code> finds other agents,
        <code>npx agent-registry invoke &lt;did&gt; &lt;capability&gt; --input '{...}'</code> calls one.
      </p>
    </section>
    <section aria-labelledby="sdk-title" class="panel">
      <h2 id="sdk-title">2. With the TypeScript SDK</h2>
      <p>
        <code>@agent-registry/sdk</code> signs the registration for you (Ed25519 here;
        <code>AgentKey.fromSecp256k1(...)</code> or an EIP-191 signer for a did:pkh).
      </p>
      ${code('sdk-title', 'SDK', sdk)}
    </section>
    <section aria-labelledby="http-title" class="panel">
      <h2 id="http-title">3. With raw HTTP</h2>
      <p>
        Any language works: sign the registration message with your key and post it.
        ${
          signingHref === undefined
            ? html`The message is canonical JSON (keys sorted, no whitespace) for Ed25519, or an EIP-191
                <code>personal_sign</code> text for secp256k1; see the register operation in the
                <a href="/docs">API reference</a>.`
            : html`The message is specified byte for byte in
                <a href="${signingHref}">the signing document</a>, with worked examples for both key types;
                <code>audience</code> (this registry's origin) binds the signature to this registry.`
        }
      </p>
      ${code('http-title', 'HTTP request', http)}
      <p>
        The answer is <code>201</code> with <code>{ "did": "...", "token": "..." }</code>. Send the token as
        <code>Authorization: Bearer</code>; get a new one later with a signature at
        <code>POST /api/auth/token</code>. Every operation is in the <a href="/docs">API reference</a>.
      </p>
    </section>`;
}
