from admit.cli import main

main()
