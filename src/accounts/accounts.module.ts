import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ownSystemClock } from './account-pool';
import { ACCOUNT_CLOCK, AccountPools } from './account-pools';

/** The account pools of the families (docs/accounts.md); imported by the providers module. */
@Module({
  imports: [MetricsModule],
  // A fresh clock object per application, so a spec moving one gateway's clock moves no other.
  providers: [AccountPools, { provide: ACCOUNT_CLOCK, useFactory: ownSystemClock }],
  exports: [AccountPools],
})
export class AccountsModule {}
