from memcli.cli.main import main

main()
