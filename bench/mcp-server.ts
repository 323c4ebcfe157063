/**
 * An MCP server on 127.0.0.1 for the entry-probe bench: stateless Streamable HTTP (JSON answers), built
 * with the official SDK, listing `--tools` tools with input schemas, so a probe does what it does against
 * a real server (initialize, initialized, tools/list). Runs in a child process: its CPU is not the registry's.
 *
 *   node --import tsx bench/mcp-server.ts <port> [tools]
 */
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const port = Number(process.argv[2]);
const toolCount = Number(process.argv[3] ?? 8);
const tools = Array.from({ length: toolCount }, (_, index) => ({
  name: `tool_${index}`,
  description: `Bench tool number ${index}`,
  inputSchema: {
    type: 'object' as const,
    properties: { text: { type: 'string', maxLength: 1000 } },
    required: ['text'],
  },
}));
let served = 0;

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    served++;
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const mcp = new Server({ name: 'bench-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.once('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp
      .connect(transport)
      .then(() =>
        transport.handleRequest(request, response, JSON.parse(Buffer.concat(chunks).toString('utf8'))),
      );
  });
});
server.keepAliveTimeout = 72_000;
server.listen(port, '127.0.0.1', () => process.send?.({ type: 'ready' }));
process.on('message', (message: { type?: string }) => {
  if (message.type === 'stop') process.send?.({ type: 'stats', served }, () => process.exit(0));
});
