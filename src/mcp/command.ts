import type { Command } from 'commander';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Serve the API as MCP tools over stdio, for AI agents')
    .addHelpText(
      'after',
      `
The server reads SIGHTLINE_API_BASE and SIGHTLINE_TOKEN, else what "sightline login" stored.
Tools that delete, revoke, disconnect or issue a secret need confirm: true; without it they
answer what they would do. Only protocol messages go to stdout; logs go to stderr.

Example client configuration (the tools are listed in the README, "Agents (MCP)"):
  {"mcpServers": {"sightline": {"command": "node", "args": ["/path/to/sightline/bin/sightline.js", "mcp"],
    "env": {"SIGHTLINE_API_BASE": "http://127.0.0.1:3000", "SIGHTLINE_TOKEN": "dft_..."}}}}`,
    )
    .action(async () => {
      // Loaded on use: the other commands need neither the MCP SDK nor the catalogue.
      const { runMcpServer } = await import('./server.ts');
      await runMcpServer();
    });
}
