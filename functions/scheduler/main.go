// Command scheduler is the Lambda function the schedule runs every minute.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/scheduler"
)

func main() { lambdafn.EventMain(scheduler.Function) }
