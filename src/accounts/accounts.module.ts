import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ownSystemClock } from './account-pool';
import { ACCOUNT_CLOCK, AccountPools } from './account-pools';
import { AccountsController } from './accounts.controller';

/** The account pools of the families (docs/accounts.md) and `GET /v1/accounts`; imported by the providers module. */
@Module({
  imports: [MetricsModule],
  controllers: [AccountsController],
  // A fresh clock object per application, so a spec moving one gateway's clock moves no other.
  providers: [AccountPools, { provide: ACCOUNT_CLOCK, useFactory: ownSystemClock }],
  exports: [AccountPools],
})
export class AccountsModule {}
