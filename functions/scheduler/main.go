// Command scheduler is the Lambda function the schedule runs every minute.
package main

import "github.com/mainguard/mainguard/shared/app"

func main() { app.Main("scheduler") }
