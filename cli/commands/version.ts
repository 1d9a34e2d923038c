import type { Command } from 'commander';
import { buildInfo, type BuildInfo } from '@baton/http';
import { SECONDS_HELP, durationMs } from '../arguments.js';
import { resolveAccess } from '../connection.js';
import { outputFor, type CliContext } from '../context.js';
import { answeredPicture, pictureAddresses, type ClusterStatus } from '../status/cluster-picture.js';
import { shortBuild, versionMix, versionOf } from '../status/versions.js';
import { table } from '../table.js';


interface VersionReport {
  client: BuildInfo;
  /** Absent with --client. */
  server?: { servedBy: string; members: { id: string; version: string | null; build: string | null; nodeVersion: string | null }[]; mixed: boolean };
}

/** `baton version`: this client's version and build, and every member's, as kubectl version does. */
export function registerVersion(program: Command, ctx: CliContext): void {
  program
    .command('version')
    .description("show this client's version and build, and each member's (warning when they differ)")
    .option('--client', 'only the client: ask no member')
    .option('--timeout <duration>', `how long each address gets to answer (default 5 s; ${SECONDS_HELP})`, durationMs('s'))
    .addHelpText(
      'after',
      `
The server side is the cluster picture the member at --url assembles (as baton status): each
member's version, the commit it was built from and its Node.js version. Members that run
different versions or builds (a rolling upgrade, or one left behind) are named in a warning.
Exit 3 when no address answers (the client's version is printed first).

Examples:
  baton version
  baton version --client -o json`,
    )
    .action(async (_local: unknown, command: Command) => {
      const options = command.optsWithGlobals<{ client?: boolean; timeout?: number }>();
      const output = outputFor(ctx, command);
      const client = buildInfo();
      if (options.client) {
        output.result({ client } satisfies VersionReport, (r) => [clientLine(r.client)]);
        return;
      }
      const access = resolveAccess(ctx, command);
      const urls = pictureAddresses(access.url, access.from);
      let picture: ClusterStatus;
      try {
        picture = (await answeredPicture(urls, access.token, options.timeout ?? 5000, access.fetch)).picture;
      } catch (error) {
        // The client's side is known whatever the cluster answers.
        if (!output.machine) ctx.stdout.write(`${clientLine(client)}\n`);
        throw error;
      }
      const members = picture.members.map((m) => ({ id: m.id, ...versionOf(m) }));
      const mix = versionMix(picture);
      const report: VersionReport = { client, server: { servedBy: picture.servedBy, members, mixed: mix !== undefined } };
      output.result(report, (r, view) => [
        clientLine(r.client),
        ...table(
          ['MEMBER', 'VERSION', 'BUILD', 'NODE'],
          r.server!.members.map((m) => [m.id, m.version ?? '- (down)', shortBuild(m.build), m.nodeVersion ?? '-']),
          view,
        ),
        ...(mix ? [`WARNING: ${mix}`] : []),
      ]);
    });
}

function clientLine(client: BuildInfo): string {
  return `client: ${client.version} (build ${shortBuild(client.build)}, node ${client.nodeVersion})`;
}
