import { Module, type DynamicModule } from '@nestjs/common';
import { AgentController } from './agent.controller.js';
import { AgentService, PI_CHOICE } from './agent.service.js';
import type { PiChoice } from './options.js';

/** The agent's routes and service, for the pi given. */
@Module({})
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a decorated class
export class AgentModule {
  static forRoot(pi: PiChoice): DynamicModule {
    return { module: AgentModule, controllers: [AgentController], providers: [{ provide: PI_CHOICE, useValue: pi }, AgentService] };
  }
}
